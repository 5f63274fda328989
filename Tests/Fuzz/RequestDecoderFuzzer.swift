// libFuzzer entry point for the HTTP request decoder. Built and run by Tests/Fuzz/run.sh, which
// compiles this file together with the decoder's sources under -sanitize=fuzzer,address.
//
// Each input is fed in two ways: all at once, and split at a point taken from its first byte, so
// the incremental paths (a head that arrives in pieces) are fuzzed too. Any crash, hang, leak or
// sanitizer report is a finding; a decoder error is a normal outcome.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    decodeAll([bytes])
    if let first = bytes.first, bytes.count > 1 {
        let split = Int(first) % bytes.count
        decodeAll([Array(bytes[..<split]), Array(bytes[split...])])
    }
    return 0
}

private func decodeAll(_ pieces: [[UInt8]]) {
    var decoder = HTTPRequestDecoder(limits: HTTPLimits(maxHeadBytes: 2048, maxBodyBytes: 4096, maxHeaderCount: 32))
    for piece in pieces {
        decoder.append(piece)
        do {
            while let event = try decoder.next() {
                if case .request(let request) = event {
                    precondition(request.body.count <= 4096, "a body beyond the limit got through")
                    _ = request.queryValue("a")
                    _ = request.keepAlive
                }
            }
        } catch {
            precondition((400...505).contains(error.status.code), "an error without a client or server status")
            return
        }
    }
}
