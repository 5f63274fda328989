import Foundation
import JSONText
import Testing

/// Builds Foundation values through the reader, to compare with `JSONSerialization`.
private func tree(_ reader: inout JSONReader) throws -> Any {
    switch try reader.peekKind() {
    case .object:
        var object: [String: Any] = [:]
        try reader.readObject { reader, key in object[key] = try tree(&reader) }
        return object
    case .array:
        var array: [Any] = []
        try reader.readArray { reader in array.append(try tree(&reader)) }
        return array
    case .string: return try reader.readString()
    case .number: return try reader.readInt64()
    case .bool: return try reader.readBool()
    case .null:
        _ = reader.readNullIfPresent()
        return NSNull()
    }
}

private func read(_ text: String) throws -> Any {
    var reader = JSONReader(Array(text.utf8))
    let value = try tree(&reader)
    try reader.finish()
    return value
}

@Suite("JSON reader")
struct JSONReaderTests {
    @Test func readsNestedValues() throws {
        let value = try read(#" {"a": [1, -2, {"b": null}], "c": "x", "d": true, "e": false, "f": {}, "g": []} "#)
        let expected: NSDictionary = ["a": [1, -2, ["b": NSNull()]], "c": "x", "d": true, "e": false, "f": [String: Any](), "g": [Any]()]
        #expect(value as? NSDictionary == expected)
    }

    @Test(arguments: [
        (#""plain""#, "plain"), (#""q\"b\\s\/""#, "q\"b\\s/"), (#""\b\f\n\r\t""#, "\u{8}\u{c}\n\r\t"),
        (#""\u00e9\u4e2d""#, "é中"), (#""\ud83d\ude00""#, "😀"), (#""raw é 😀""#, "raw é 😀"), (#""""#, ""),
    ])
    func strings(_ json: String, _ expected: String) throws {
        #expect(try read(json) as? String == expected)
    }

    @Test(arguments: [("0", Int64(0)), ("-7", -7), ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min)])
    func integers(_ json: String, _ expected: Int64) throws {
        #expect(try read(json) as? Int64 == expected)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "[1 2]", "01", "1.5", "1e3", "9223372036854775808", "-9223372036854775809",
        "-", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"", "\"a\u{1}b\"",
        "{\"a\":1} x", "[\"a\"]]", "{1:2}", "'a'", "[,]", "NaN",
    ])
    func malformedTextThrows(_ json: String) {
        #expect(throws: JSONReadError.self) { try read(json) }
    }

    /// ASCII is taken as it is, so a string is checked as soon as one byte is not: at its start,
    /// after ASCII, or alone at its end.
    @Test(arguments: [[0xC3, 0x28], [0x61, 0x62, 0xFF, 0x63], [0x61, 0x80], [0x61, 0xE2, 0x82]] as [[UInt8]])
    func invalidUTF8Throws(_ content: [UInt8]) {
        var reader = JSONReader([UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")])
        #expect(throws: JSONReadError.self) { try reader.readString() }
    }

    @Test func deepNestingIsRefusedNotRecursedInto() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        var reader = JSONReader(Array(deep.utf8))
        #expect(throws: JSONReadError.self) { try reader.skipValue() }
        let fine = String(repeating: "[", count: JSONReader.maxDepth) + String(repeating: "]", count: JSONReader.maxDepth)
        var fineReader = JSONReader(Array(fine.utf8))
        #expect(throws: Never.self) { try fineReader.skipValue() }
    }

    @Test func skipValueChecksNumbersAndEverythingElse() throws {
        var reader = JSONReader(Array(#"[1.5e-3, -0.25, 2E+10, 0, {"k": ["v", null, true]}, "s"]"#.utf8))
        try reader.skipValue()
        try reader.finish()
        for bad in ["1.", "1e", "-", ".5", "1.e3", "[1.5e]"] {
            var badReader = JSONReader(Array(bad.utf8))
            #expect(throws: JSONReadError.self, "\(bad)") { try badReader.skipValue(); try badReader.finish() }
        }
    }

    @Test func errorsSayWhereAndWhy() {
        do {
            _ = try read(#"{"a": 1 "b": 2}"#)
            Issue.record("expected an error")
        } catch let error as JSONReadError {
            #expect(error.offset == 8, "the offset of the offending byte")
            #expect(error.description == "expected ',' or '}' at byte 8")
        } catch {
            Issue.record("unexpected \(error)")
        }
        var html = JSONReader(Array("<html>".utf8))
        #expect(throws: JSONReadError(offset: 0, reason: "expected an object")) { try html.readObject { _, _ in } }
    }

    /// Random documents serialized by Foundation read back as the same values.
    @Test func agreesWithJSONSerializationOnRandomDocuments() throws {
        var generator = SystemRandomNumberGenerator()
        let characters: [Character] = ["a", "\"", "\\", "\n", "\u{0}", "é", "😀", "/", " ", "\u{2028}"]
        func randomValue(_ depth: Int) -> Any {
            switch Int.random(in: 0...(depth > 3 ? 3 : 5), using: &generator) {
            case 0: return Int64.random(in: Int64.min...Int64.max, using: &generator)
            case 1: return String((0..<Int.random(in: 0...12, using: &generator)).map { _ in characters.randomElement(using: &generator)! })
            case 2: return Bool.random(using: &generator)
            case 3: return NSNull()
            case 4: return (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth + 1) }
            default:
                var object: [String: Any] = [:]
                for index in 0..<Int.random(in: 0...4, using: &generator) { object["k\(index)\u{e9}"] = randomValue(depth + 1) }
                return object
            }
        }
        for _ in 0..<300 {
            let document = ["root": randomValue(0)]
            let data = try JSONSerialization.data(withJSONObject: document, options: [.fragmentsAllowed])
            let parsed = try read(String(decoding: data, as: UTF8.self))
            #expect(parsed as? NSDictionary == document as NSDictionary, "\(String(decoding: data, as: UTF8.self))")
        }
    }
}
