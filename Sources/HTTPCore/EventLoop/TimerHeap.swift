/// Timers of one event loop, ordered by deadline in a binary heap; cancelled entries are skipped lazily.
struct TimerHeap {
    typealias ID = UInt64

    private struct Entry {
        var deadline: MonotonicTime
        var id: ID
    }

    private var heap: [Entry] = []
    private var actions: [ID: () -> Void] = [:]
    private var nextID: ID = 1

    var isEmpty: Bool { actions.isEmpty }

    mutating func insert(deadline: MonotonicTime, action: @escaping () -> Void) -> ID {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        return id
    }

    mutating func cancel(_ id: ID) {
        actions[id] = nil
        if actions.isEmpty { heap.removeAll() }
    }

    /// The epoll timeout until the next live timer, or -1 (wait forever) when there is none.
    mutating func millisecondsUntilNext(now: MonotonicTime) -> Int32 {
        while let first = heap.first, actions[first.id] == nil { popFirst() }
        guard let first = heap.first else { return -1 }
        let nanoseconds = first.deadline.nanoseconds &- now.nanoseconds
        if nanoseconds <= 0 { return 0 }
        return Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
    }

    /// Removes and returns the actions that are due; the caller runs them, so an action may
    /// schedule new timers without touching the heap while it is being changed.
    mutating func takeExpired(now: MonotonicTime) -> [() -> Void] {
        var due: [() -> Void] = []
        while let first = heap.first, first.deadline <= now {
            popFirst()
            if let action = actions.removeValue(forKey: first.id) {
                due.append(action)
            }
        }
        return due
    }

    private mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
