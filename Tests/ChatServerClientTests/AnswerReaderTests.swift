import Foundation
import JSONText
import TestSupport
import Testing
import ChatServerClient
import Upstream

@Suite("Chat server answer reader")
struct AnswerReaderTests {
    private func answerJSON(_ streams: [String: [UpstreamMessage]]) -> [UInt8] {
        var json = JSONWriter()
        json.raw(#"{"messages":{"#)
        for (index, (user, messages)) in streams.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { json.raw(",") }
            json.string(user)
            json.raw(":[")
            for (offset, message) in messages.enumerated() {
                if offset > 0 { json.raw(",") }
                // As the simulator writes it: the protocol's fields only.
                json.raw("{")
                json.messageFields(id: message.id, chatId: message.chatId, sender: message.sender, text: message.text, sentAt: message.sentAt,
                                   chatName: message.chatName)
                json.raw("}")
            }
            json.raw("]")
        }
        json.raw("}}")
        return json.bytes
    }

    private func randomStreams(_ random: inout TestRandom) -> [String: [UpstreamMessage]] {
        let texts = ["hi", "quote \" and \\", "line\nbreak", "<b>html</b>", "é 😀", "", "\u{0}\u{1f}"]
        var streams: [String: [UpstreamMessage]] = [:]
        for user in ["1", "2"] where Bool.random(using: &random) {
            streams[user] = (0..<Int.random(in: 0...5, using: &random)).map { index in
                UpstreamMessage(id: Int64(index + 1), chatId: Int64.random(in: 1...9, using: &random), sender: texts.randomElement(using: &random)!,
                                text: texts.randomElement(using: &random)!, sentAt: "2026-11-29T12:00:00.000Z")
            }
        }
        return streams
    }

    @Test func readsWhatJSONDecoderReads() throws {
        var random = TestRandom(seed: 7)
        for _ in 0..<200 {
            let bytes = answerJSON(randomStreams(&random))
            #expect(try MessagesAnswer(json: bytes) == JSONDecoder().decode(MessagesAnswer.self, from: Data(bytes)))
        }
    }

    @Test(arguments: [#"{}"#, #"{"messages":null}"#, #"{"messages":{}}"#, #" {"other":[1,{"x":"y"}],"messages":{}} "#])
    func emptyAnswers(_ json: String) throws {
        #expect(try MessagesAnswer(json: Array(json.utf8)).messages.isEmpty)
    }

    @Test func unknownFieldsAreSkipped() throws {
        let json = #"{"messages":{"1":[{"id":3,"chatId":1,"sender":"a","text":"b","sentAt":"t","edited":{"by":[1,2]}}]},"next":null}"#
        #expect(try MessagesAnswer(json: Array(json.utf8)).messages["1"] == [UpstreamMessage(id: 3, chatId: 1, sender: "a", text: "b", sentAt: "t")])
    }

    @Test(arguments: [
        #"{"messages":{"1":[{"id":3,"chatId":1,"sender":"a","text":"b"}]}}"#,          // no sentAt
        #"{"messages":{"1":[{"id":"3","chatId":1,"sender":"a","text":"b","sentAt":"t"}]}}"#,  // id as a string
        #"{"messages":{"1":[{"id":3,"chatId":1,"sender":null,"text":"b","sentAt":"t"}]}}"#,   // null sender
        #"{"messages":{"1":{"id":3}}}"#, #"{"messages":[]}"#, #"[]"#, #"{"messages":{"1":[]}"#, #"{"messages":{}} {}"#,
    ])
    func wrongShapesThrow(_ json: String) {
        #expect(throws: (any Error).self) { try MessagesAnswer(json: Array(json.utf8)) }
    }

    /// Byte-level mutants of real answers: the reader never traps, and whatever it accepts,
    /// `JSONDecoder` accepts with the same messages.
    @Test func mutantsNeverTrapAndAgreeWhenAccepted() throws {
        var random = TestRandom(seed: 42)
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = answerJSON(randomStreams(&random))
            for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0...2, using: &random) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: position)
                default: bytes.insert(Array(#"{}[],:"\0-e."#.utf8).randomElement(using: &random)!, at: position)
                }
            }
            guard let ours = try? MessagesAnswer(json: bytes) else { continue }
            accepted += 1
            #expect(ours == (try? JSONDecoder().decode(MessagesAnswer.self, from: Data(bytes))), "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(accepted > 0, "some mutants are still valid answers")
    }

    @Test func eachStreamResumesAfterItsNewestMessage() throws {
        let json = #"{"messages":{"1":[{"id":4,"chatId":1,"sender":"a","text":"b","sentAt":"t"},{"id":9,"chatId":1,"sender":"a","text":"b","sentAt":"t"},{"id":7,"chatId":1,"sender":"a","text":"b","sentAt":"t"}],"2":[]}}"#
        let answer = try MessagesAnswer(json: Array(json.utf8))
        #expect(answer.cursors == ["1": "9"], "an empty stream keeps its cursor")
    }
}
