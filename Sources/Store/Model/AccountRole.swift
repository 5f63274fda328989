/// Which of the two synced accounts a message, chat or cursor belongs to.
public enum AccountRole: Int64, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case primary = 0
    case linked = 1

    public init?(name: String) {
        switch name {
        case "primary": self = .primary
        case "linked": self = .linked
        default: return nil
        }
    }

    public var description: String { self == .primary ? "primary" : "linked" }
}
