import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// https-fetch: one HTTPS request through Foundation's URLSession, in a process of its own.
//
// The toolchain's only TLS client is URLSession, and on Linux it traps inside FoundationNetworking
// when a request is cancelled at the wrong moment ("TaskRegistry.swift:118: Fatal error: Trying to
// access a behaviour for a task that in not in the registry"; about one cancellation in a
// thousand, with the async, completion-handler and delegate APIs alike) and can hang on
// cancellation. A trap cannot be caught. So the dashboard never cancels a URLSession task: each
// request runs here, and "cancel" is the dashboard killing this process. Nothing that goes wrong
// here can take the dashboard down.
//
// stdin:  {"method", "url", "headers": {name: value}, "body": base64, "timeoutSeconds"}
// stdout: {"status", "headers": {name: value}, "body": base64}
//      or {"error": "unreachable" | "timedOut" | "badResponse", "detail"}
@main
enum HTTPSFetch {
    struct Request: Decodable {
        var method: String
        var url: String
        var headers: [String: String]
        var body: String
        var timeoutSeconds: Double
    }

    static func main() async {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        guard let request = try? JSONDecoder().decode(Request.self, from: input), let url = URL(string: request.url),
              url.scheme == "https" else {
            return answer(["error": "badResponse", "detail": "https-fetch: the request on stdin is not one it can send"])
        }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeoutSeconds)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(base64Encoded: request.body) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = request.timeoutSeconds
        let session = URLSession(configuration: configuration)
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else {
                return answer(["error": "badResponse", "detail": "not an HTTP response"])
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            answer(["status": http.statusCode, "headers": headers, "body": data.base64EncodedString()])
        } catch let error as URLError {
            let kind = error.code == .timedOut ? "timedOut"
                : [.badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData].contains(error.code) ? "badResponse"
                : "unreachable"
            answer(["error": kind, "detail": "\(error.code.rawValue) \(error.localizedDescription)"])
        } catch {
            answer(["error": "unreachable", "detail": "\(error)"])
        }
    }

    static func answer(_ object: [String: Any]) {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data(#"{"error":"badResponse","detail":"unwritable answer"}"#.utf8)
        FileHandle.standardOutput.write(data)
    }
}
