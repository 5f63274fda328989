/// Lets an injected `any RandomNumberGenerator` be passed where a concrete generator is needed.
struct AnyRandomGenerator: RandomNumberGenerator, Sendable {
    private var base: any RandomNumberGenerator & Sendable

    init(_ base: any RandomNumberGenerator & Sendable) {
        self.base = base
    }

    mutating func next() -> UInt64 {
        base.next()
    }
}

/// Continuations waiting for the next outcome of something, each one removable when the task
/// that waits is cancelled. Owned by an actor, which resumes them all when the outcome is known.
struct Waiters<Value: Sendable> {
    private var waiting: [UInt64: CheckedContinuation<Value, Never>] = [:]
    private var lastID: UInt64 = 0

    var isEmpty: Bool { waiting.isEmpty }

    mutating func makeID() -> UInt64 {
        lastID += 1
        return lastID
    }

    mutating func add(_ continuation: CheckedContinuation<Value, Never>, id: UInt64) {
        waiting[id] = continuation
    }

    mutating func resumeAll(returning value: Value) {
        let all = waiting
        waiting = [:]
        all.values.forEach { $0.resume(returning: value) }
    }

    mutating func cancel(_ id: UInt64, returning value: Value) {
        waiting.removeValue(forKey: id)?.resume(returning: value)
    }
}
