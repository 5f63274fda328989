import Foundation
import JSONText
import Testing

@Suite("JSON writer")
struct JSONWriterTests {
    private func written(_ build: (inout JSONWriter) -> Void) -> String {
        var json = JSONWriter()
        build(&json)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    @Test func valuesAsJSON() {
        #expect(written { $0.number(-42) } == "-42")
        #expect(written { $0.number(Int64.max) } == "9223372036854775807")
        #expect(written { $0.bool(true); $0.raw(","); $0.bool(false); $0.raw(","); $0.null() } == "true,false,null")
        #expect(written { $0.string("plain é 😀") } == "\"plain é 😀\"")
    }

    @Test(arguments: [
        ("say \"hi\"", #""say \"hi\"""#), ("a\\b", #""a\\b""#), ("line\nnext\r\ttab", #""line\nnext\r\ttab""#),
        ("\u{0}\u{1}\u{1f}", #""\u0000\u0001\u001f""#), ("</script>", #""</script>""#),
    ])
    func escapes(_ text: String, _ expected: String) {
        #expect(written { $0.string(text) } == expected)
    }

    /// Every string, however odd, reads back as itself through a standard JSON parser.
    @Test func randomStringsRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{7}", "\u{1f}", "\u{7f}", "é", "😀", "/", " ", "\u{2028}"]
        for _ in 0..<500 {
            let text = String((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let json = written { $0.raw("["); $0.string(text); $0.raw("]") }
            let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String]
            #expect(parsed == [text], "\(json.debugDescription)")
        }
    }
}
