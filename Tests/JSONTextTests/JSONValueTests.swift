import Foundation
import JSONText
import TestSupport
import Testing

private func parse(_ text: String) throws -> JSONValue {
    try JSONValue(parsing: Array(text.utf8))
}

@Suite("JSON value")
struct JSONValueTests {
    @Test func everyKindIsKept() throws {
        let value = try parse(#"{"s": "é\n", "i": -7, "d": 1.5, "t": true, "f": false, "n": null, "a": [1, "x", []], "o": {}}"#)
        #expect(value == .object([
            "s": .string("é\n"), "i": .integer(-7), "d": .number(1.5), "t": .bool(true), "f": .bool(false), "n": .null,
            "a": .array([.integer(1), .string("x"), .array([])]), "o": .object([:]),
        ]))
    }

    @Test(arguments: [
        ("0", JSONValue.integer(0)), ("-0", .integer(0)), ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
        ("9223372036854775808", .number(9_223_372_036_854_775_808)), ("1e2", .number(100)), ("2.50", .number(2.5)), ("-1E-2", .number(-0.01)),
    ])
    func aNumberIsAnIntegerOnlyWithoutFractionOrExponentAndWithin64Bits(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test(arguments: ["", "{", "[1,]", "01", "1.", "-", #"{"a" 1}"#, #""\ud800""#, "1 2", "nul", "[\"\u{1}\"]"])
    func malformedTextThrows(text: String) {
        #expect(throws: JSONReadError.self) { try parse(text) }
    }

    @Test func aKeyGivenTwiceKeepsItsLastValue() throws {
        #expect(try parse(#"{"a": 1, "a": 2}"#) == .object(["a": .integer(2)]))
    }

    @Test func fieldsReadAsTheirKindOnly() throws {
        let value = try parse(#"{"n": 1.0, "i": 3, "s": "3", "o": {"k": true}}"#)
        #expect(value["i"]?.integer == 3 && value["s"]?.integer == nil, "a string of digits is no integer")
        #expect(value["n"]?.integer == nil, "1.0 is a number with a fraction")
        #expect(value["o"]?["k"]?.bool == true)
        #expect(value["s"]?["k"] == nil && value["missing"] == nil, "a field of a string or of an absent value is none")
        #expect(value.array == nil && value.object?.count == 4)
    }

    /// Random documents read the same through the reader as through `Decodable` (what the product
    /// used before), and what a value writes reads back as that value.
    @Test func readsAsJSONDecoderDoesAndWritesWhatItReads() throws {
        var random = TestRandom(seed: 52)
        let characters: [Character] = ["a", "\"", "\\", "\n", "\u{0}", "é", "😀", "/", " ", "\u{2028}"]
        func randomValue(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0...(depth > 3 ? 4 : 6), using: &random) {
            case 0: return .integer(Int64.random(in: Int64.min...Int64.max, using: &random))
            case 1: return .string(String((0..<Int.random(in: 0...12, using: &random)).map { _ in characters.randomElement(using: &random)! }))
            case 2: return .bool(Bool.random(using: &random))
            case 3: return .null
            case 4: return .number(Double(Int.random(in: -100_000...100_000, using: &random)) / 64 + 1.0 / 128)  // never whole
            case 5: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth + 1) })
            default:
                var fields: [String: JSONValue] = [:]
                for index in 0..<Int.random(in: 0...4, using: &random) { fields["k\(index)\u{e9}"] = randomValue(depth + 1) }
                return .object(fields)
            }
        }
        for _ in 0..<500 {
            let value = JSONValue.object(["root": randomValue(0)])
            let text = value.serialized()
            let read = try JSONValue(parsing: text)
            #expect(read == value, "\(String(decoding: text, as: UTF8.self))")
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text)) == read)
        }
    }
}
