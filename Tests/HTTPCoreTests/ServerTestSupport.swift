import HTTPCore
import TestSupport

/// Runs `body` against a fresh server on a free loopback port, then shuts the server down.
@discardableResult
func withServer<T>(
    _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(port: 0),
    responder: any HTTPResponder,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.port = 0
    let loop = try EventLoop(name: "test-http")
    let server = try HTTPServer(configuration: configuration, loop: loop)
    try await server.start(responder: responder)
    do {
        let result = try await body(server)
        await server.shutdown(gracePeriod: .milliseconds(100))
        await loop.shutdown()
        return result
    } catch {
        await server.shutdown(gracePeriod: .milliseconds(100))
        await loop.shutdown()
        throw error
    }
}

/// Answers `/echo...` with the target, and parks `/hold...` requests until a test completes them.
struct TestResponder: HTTPResponder {
    let parking: ParkingLot

    func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        if request.path.hasPrefix("/slow") {
            // Still working when a half-closing client's end of stream arrives.
            try await Task.sleep(for: .milliseconds(100))
            return .text("slow answer")
        }
        if request.path.hasPrefix("/hold") {
            let held = HeldResponse(onAbandoned: { [parking] _ in
                Task { await parking.noteAbandoned(String(request.path)) }
            })
            await parking.park(held, path: String(request.path))
            return await held.value() ?? .text("client gone", status: .serviceUnavailable)
        }
        var response = HTTPResponse.text("\(request.method) \(request.target) \(String(decoding: request.body, as: UTF8.self))")
        response.headers.add("X-Connection", String(context.connectionID))
        return response
    }
}

/// `inner`, with a finishing step that names what it finished: the request's path, or "core".
struct FinishingResponder: HTTPResponder {
    let inner: TestResponder

    func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        try await inner.respond(to: request, context: context)
    }

    /// `/park...`: held by the connection itself (no task waits), completed from the lot.
    func respondOnLoop(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        guard request.path.hasPrefix("/park") else { return nil }
        let held = HeldResponse()
        let parking = inner.parking, path = String(request.path)
        Task { await parking.park(held, path: path) }
        return .held(held)
    }

    func finishing(for request: HTTPRequest?) -> ResponseFinishing {
        ResponseFinishing(setting: ["X-Finished": request.map { String($0.path) } ?? "core"])
    }
}

/// Where held requests wait; tests await events here instead of sleeping.
actor ParkingLot {
    private var parked: [String: HeldResponse] = [:]
    private var parkWaiters: [String: [CheckedContinuation<HeldResponse, Never>]] = [:]
    private var abandoned: Set<String> = []
    private var abandonWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    func park(_ held: HeldResponse, path: String) {
        parked[path] = held
        parkWaiters.removeValue(forKey: path)?.forEach { $0.resume(returning: held) }
    }

    /// Suspends until a request for `path` is parked.
    func held(_ path: String) async -> HeldResponse {
        if let held = parked[path] { return held }
        return await withCheckedContinuation { parkWaiters[path, default: []].append($0) }
    }

    func noteAbandoned(_ path: String) {
        abandoned.insert(path)
        abandonWaiters.removeValue(forKey: path)?.forEach { $0.resume() }
    }

    /// Suspends until the server has told the holder of `path` that its client left.
    func waitUntilAbandoned(_ path: String) async {
        if abandoned.contains(path) { return }
        await withCheckedContinuation { abandonWaiters[path, default: []].append($0) }
    }
}


import Foundation
