import Foundation
import HTTPCore
import JSONText
import Store
import Upstream

/// `GET /api/export?account=...&chat=ID`: every stored message of the account (or one chat), oldest
/// first, as JSON Lines, streamed: slices of the store are read and written one after another,
/// each only once the client has taken most of the last, so memory stays flat however large the
/// copy (CONTRACT section 9).
struct ExportRoutes {
    let copy: LocalCopy

    /// Messages read from the store at a time.
    static let sliceSize = 2000
    /// Bytes gathered before a write.
    static let writeSize = 64 * 1024

    func register(in router: inout Router) {
        router.add("GET", "/api/export") { request, _, _ in
            try await export(request)
        }
    }

    private func export(_ request: HTTPRequest) async throws -> HTTPResponse {
        let parameters = QueryParameters(request)
        let account: AccountRole, chat: Int64?
        do throws(Problem) {
            account = try parameters.account()
            chat = try parameters.chat()
        } catch {
            return error.response
        }
        let chats: [ChatSummary]
        do {
            chats = try await copy.chats(of: account)
        } catch {
            return Problem.storageError("The local copy cannot be read").response
        }
        if let chat, !chats.contains(where: { $0.id == chat }) {
            return Problem(status: .notFound, detail: "The \(account) account has no chat \(chat).").response
        }
        let headers: HTTPHeaders = [
            "Content-Type": "application/x-ndjson; charset=utf-8",
            "Content-Disposition": "attachment; filename=\"\(Self.fileName(account: account, chat: chat, chats: chats))\"",
        ]
        let copy = self.copy
        return .streamed(headers: headers) { writer in
            var after = Int64.min
            var json = JSONWriter(capacity: Self.writeSize + 4096)
            while true {
                let slice = try await copy.slice(of: account, chat: chat, after: after, limit: Self.sliceSize)
                guard let last = slice.last else { break }
                for message in slice {
                    Self.line(message, into: &json)
                    if json.bytes.count >= Self.writeSize {
                        try await writer.write(json.bytes)
                        json = JSONWriter(capacity: Self.writeSize + 4096)
                    }
                }
                after = last.id
            }
            try await writer.write(json.bytes)
        }
    }

    /// `{"account","id","chatId","sender","text","sentAt","chatName"?,"receivedAt","threadId"?,"reactions"?}`
    /// and a newline (`threadId` the stored id of the thread's first message, for a reply in a
    /// thread; `reactions` as `/api/messages` gives them, for a message that has any).
    static func line(_ message: StoredMessage, into json: inout JSONWriter) {
        json.raw(#"{"account":"#)
        json.string(message.account.description)
        json.raw(",")
        json.messageFields(id: message.id, chatId: message.chatId, sender: message.sender, text: message.text, sentAt: message.sentAt,
                           chatName: message.chatName)
        json.raw(#","receivedAt":"#)
        json.string(message.receivedAt)
        if let threadId = message.threadId {
            json.raw(#","threadId":"#)
            json.number(threadId)
        }
        if !message.reactions.isEmpty {
            json.raw(#","reactions":"#)
            MessagesEvent.reactions(message.reactions, to: &json)
        }
        json.raw("}\n")
    }

    /// `messages-primary-2026-11-30.jsonl`, or with the chat: `messages-primary-work-2026-11-30.jsonl`
    /// (the name's letters and digits, accents dropped, so the header needs no escaping).
    static func fileName(account: AccountRole, chat: Int64?, chats: [ChatSummary], today: Date = Date()) -> String {
        var parts = ["messages", account.description]
        if let chat {
            let name = chats.first { $0.id == chat }?.name ?? ""
            let folded = name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
            let slug = String(folded.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar)) ? Character(scalar) : "-"
            }).split(separator: "-").joined(separator: "-")
            parts.append(slug.isEmpty ? "chat-\(chat)" : slug)
        }
        parts.append(String(Timestamp.string(today).prefix(10)))
        return parts.joined(separator: "-") + ".jsonl"
    }
}
