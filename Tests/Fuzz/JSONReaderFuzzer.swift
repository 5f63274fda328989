// libFuzzer entry point for JSONText's reader. Built and run by `Tests/Fuzz/run.sh SECONDS json`,
// which compiles this file together with the reader under -sanitize=fuzzer,address.
//
// Each input is read twice: as any JSON value (every kind, skipped), and as a tree whose strings
// and integers are pulled out, the way the upstream answers are read. A thrown JSONReadError is a
// normal outcome; a crash, hang, leak or sanitizer report is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var skipping = JSONReader(bytes)
    let skipped = (try? skipping.skipValue()).flatMap { try? skipping.finish() } != nil
    var pulling = JSONReader(bytes)
    let pulled = (try? pull(&pulling)).flatMap { try? pulling.finish() } != nil
    // Pulling fails where skipping does not only on numbers that are not Int64 integers.
    precondition(!pulled || skipped, "pulled what skipping refused")
    return 0
}

private func pull(_ reader: inout JSONReader) throws {
    switch try reader.peekKind() {
    case .object: try reader.readObject { reader, _ in try pull(&reader) }
    case .array: try reader.readArray { reader in try pull(&reader) }
    case .string: _ = try reader.readString()
    case .number: _ = try reader.readInt64()
    case .bool: _ = try reader.readBool()
    case .null: if !reader.readNullIfPresent() { throw reader.error("not null after all") }  // peekKind looks at one byte
    }
}
