// libFuzzer entry point for the HTTP response decoder: what the client reads from servers that are
// not ours (a chat server, a Matrix homeserver). Built and run by Tests/Fuzz/run.sh (target
// `response`), compiled together with the decoder's sources under -sanitize=fuzzer,address.
//
// Each input is fed whole and split at a point taken from its first byte, then the end of the
// stream is signalled, as a server closing the connection would. Any crash, hang, leak or
// sanitizer report is a finding; a decoder failure is a normal outcome.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for expectsBody in [true, false] {
        decode([bytes], expectsBody: expectsBody)
        if let first = bytes.first, bytes.count > 1 {
            let split = Int(first) % bytes.count
            decode([Array(bytes[..<split]), Array(bytes[split...])], expectsBody: expectsBody)
        }
    }
    return 0
}

private func decode(_ pieces: [[UInt8]], expectsBody: Bool) {
    var decoder = HTTPResponseDecoder(maxBytes: 8192, expectsBody: expectsBody)
    do {
        for piece in pieces {
            if let response = try piece.withUnsafeBytes({ bytes throws(HTTPResponseDecoder.Failure) in try decoder.feed(bytes) }) {
                check(response)
                return
            }
        }
        check(try decoder.finish())
    } catch {
        return
    }
}

private func check(_ response: HTTPClientResponse) {
    precondition((100...999).contains(response.status), "a status outside 100...999")
    precondition(response.body.count <= 8192, "a body beyond the limit got through")
}
