import Foundation
import Upstream

/// The simulator's chats as people would have them: who writes in each, and what they say. A new
/// world of the built-in demo starts with a short history from these, and the demo's occasional
/// messages come from them too, so a first look at the dashboard reads like someone's account.
enum DemoWorld {
    struct Chat {
        var name: String
        /// Who writes in it (a direct chat has one other person).
        var members: [String]
        /// What they say, in order.
        var lines: [String]
    }

    /// By chat id from 1.
    static let chats: [Chat] = [
        Chat(name: "Family", members: ["Mum", "Dad", "Sam"], lines: [
            "Dinner at ours on Sunday? Grandma is coming too.",
            "I'll bring the big pot for the soup.",
            "Can someone pick up bread on the way?",
            "Train is late, I'll be there by seven.",
            "Photos from the weekend are in the shared album.",
            "Don't forget Sam's birthday is next Friday!",
        ]),
        Chat(name: "Work", members: ["Priya", "Tom", "Alice"], lines: [
            "Standup moves to 10:15 tomorrow.",
            "The release notes draft is in the doc, comments welcome.",
            "Build is green again, thanks Tom.",
            "Can we push the review to Thursday?",
            "Customer call went well, notes to follow.",
            "Reminder: the office is closed on Monday.",
        ]),
        Chat(name: "Book club", members: ["Bob", "Eve", "Dmitri"], lines: [
            "Chapter twelve was something else.",
            "No spoilers, I'm only halfway!",
            "Next month: the one with the lighthouse on the cover?",
            "Same café as last time, 7 pm.",
            "I'll bring the extra copy for whoever needs it.",
        ]),
        Chat(name: "Climbing trip", members: ["Alice", "Dmitri", "Chloé"], lines: [
            "Weather looks good for Saturday.",
            "Who has the second rope?",
            "Meeting at the car park at 8.",
            "Bring layers, it gets cold at the top.",
            "I booked the hut for two nights.",
        ]),
        Chat(name: "Chloé", members: ["Chloé"], lines: [
            "Are you coming tonight?",
            "I found the book you were looking for.",
            "Call me when you're free 🙂",
            "Running ten minutes late, sorry!",
            "That was such a good film.",
        ]),
    ]

    static func name(of chatId: Int64) -> String? {
        chats.indices.contains(Int(chatId) - 1) ? chats[Int(chatId) - 1].name : nil
    }

    /// Who writes a message in `chatId`: one of its members.
    static func sender(in chatId: Int64, using random: inout SeededGenerator) -> String {
        let members = chats.indices.contains(Int(chatId) - 1) ? chats[Int(chatId) - 1].members : ["Alice"]
        return members[Int.random(in: 0..<members.count, using: &random)]
    }

    /// A line someone in `chatId` says.
    static func line(in chatId: Int64, using random: inout SeededGenerator) -> String {
        guard chats.indices.contains(Int(chatId) - 1) else { return "Hello!" }
        let lines = chats[Int(chatId) - 1].lines
        return lines[Int.random(in: 0..<lines.count, using: &random)]
    }

    /// The history a new demo world starts with: every line of every chat, oldest first, sent over
    /// the two days before `now`, ids from 1.
    static func history(endingAt now: Date, using random: inout SeededGenerator) -> [UpstreamMessage] {
        var lines: [(chatId: Int64, text: String)] = []
        for (index, chat) in chats.enumerated() {
            lines += chat.lines.map { (Int64(index + 1), $0) }
        }
        lines.shuffle(using: &random)
        let span: TimeInterval = 2 * 24 * 3600
        return lines.enumerated().map { offset, line in
            let sentAt = now.addingTimeInterval(-span + span * Double(offset) / Double(lines.count))
            return UpstreamMessage(id: Int64(offset + 1), chatId: line.chatId, sender: sender(in: line.chatId, using: &random),
                                   text: line.text, sentAt: Timestamp.string(sentAt), chatName: name(of: line.chatId))
        }
    }

    /// How often the demo sends a message by itself: about one every 30 s, off with one click.
    static let messagesPerSecond = 1.0 / 30
}
