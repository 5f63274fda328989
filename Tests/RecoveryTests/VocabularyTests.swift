import Foundation
import Testing
@testable import Recovery

/// The error kinds and option ids are written once in Swift (`ProblemKind`, `OptionID`) and once
/// in the page (`Public/js/vocabulary.js`); both must say what `Public/openapi.json` says.
@Suite("Recovery vocabulary")
struct VocabularyTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `name: "value"` pairs of one `export const NAME = Object.freeze({...})` in vocabulary.js.
    private static func pageConstants(_ name: String) throws -> [String: String] {
        let source = try String(contentsOf: root.appendingPathComponent("Public/js/vocabulary.js"), encoding: .utf8)
        let start = try #require(source.range(of: "export const \(name) = Object.freeze({"))
        let end = try #require(source.range(of: "});", range: start.upperBound..<source.endIndex))
        var pairs: [String: String] = [:]
        for line in source[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            pairs[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " ,\""))
        }
        return pairs
    }

    private static func schemaEnum(_ path: [String]) throws -> [String] {
        let data = try Data(contentsOf: root.appendingPathComponent("Public/openapi.json"))
        var node: Any = try JSONSerialization.jsonObject(with: data)
        for key in path { node = try #require((node as? [String: Any])?[key], "openapi.json has \(path)") }
        return try #require((node as? [String: Any])?["enum"] as? [String])
    }

    /// A case's name as Swift prints it (`upstreamError`), the key the page uses for it too.
    private static func swiftPairs<T: RawRepresentable<String> & CaseIterable>(_: T.Type) -> [String: String] {
        Dictionary(uniqueKeysWithValues: T.allCases.map { ("\($0)", $0.rawValue) })
    }

    @Test func problemKindsAreTheSameInSwiftThePageAndTheSchema() throws {
        let swift = Self.swiftPairs(ProblemKind.self)
        #expect(try Self.pageConstants("PROBLEM") == swift)
        #expect(Set(try Self.schemaEnum(["components", "schemas", "RecoverableError", "properties", "type"])) == Set(swift.values))
        #expect(Set(try Self.schemaEnum(["components", "schemas", "ProblemRecord", "properties", "type"])) == Set(swift.values))
    }

    @Test func optionIdsAreTheSameInSwiftThePageAndTheSchema() throws {
        let swift = Self.swiftPairs(OptionID.self)
        #expect(try Self.pageConstants("OPTION") == swift)
        #expect(Set(try Self.schemaEnum(["components", "schemas", "Option", "properties", "id"])) == Set(swift.values))
        #expect(Set(swift.values).count == OptionID.allCases.count, "each id means one thing")
        // An API user tells from the schema which id does what: a line for each.
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Public/openapi.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let lines = try #require(schema[path: ["components", "schemas", "Option", "properties", "id", "x-enum-descriptions"]] as? [String: String])
        #expect(Set(lines.keys) == Set(swift.values))
        #expect(lines.values.allSatisfy { $0.count > 20 }, "each line says what the option does")
        #expect(!swift.values.contains(OptionID.contractCancel), "cancel names whichever option backs out, never one of its own")
    }

    @Test func theContractsCancelRunsTheErrorsBackingOutOption() {
        func error(_ options: [RecoveryOption]) -> UserFacingError {
            UserFacingError(kind: .outOfSpace, title: "T", detail: "D", suggestion: "S", presentation: .view, options: options, debug: "",
                            createdAt: Date(timeIntervalSince1970: 0))
        }
        #expect(error([.notNow, .freeSpace]).option(posted: "cancel")?.id == .notNow)
        #expect(error([.tryAgain, .stopSyncing]).option(posted: "cancel")?.id == .stopSyncing)
        #expect(error([.tryAgain, .dismissPurchase]).option(posted: "cancel")?.id == .dismiss)
        #expect(error([.tryAgain]).option(posted: "cancel") == nil, "no option backs out: nothing runs")
        #expect(error([.tryAgain, .stopSyncing]).option(posted: "free-space") == nil, "an option the error does not offer")
        #expect(error([.tryAgain, .stopSyncing]).option(posted: "stop-syncing")?.id == .stopSyncing)
        #expect(error([.tryAgain, .stopSyncing]).option(posted: "not-an-option") == nil)
    }
}

private extension Dictionary where Key == String, Value == Any {
    subscript(path keys: [String]) -> Any? {
        var node: Any? = self
        for key in keys { node = (node as? [String: Any])?[key] }
        return node
    }
}
