import DocumentKit
import Foundation
import Synchronization
import Testing

/// Issue #13 §5: the compiler checks nothing of a `Document` subclass's own stored properties
/// (it must restate `@unchecked Sendable`), so the rule of *Documents and concurrency* is checked
/// here: every stored property of a subclass in this repository is a `let`.
@Suite struct DocumentSubclassRuleTests {
    /// The article's example, compiled: immutable settings, mutable state behind a `Mutex`.
    final class TitledText: Document<String>, @unchecked Sendable {
        let encoding: String.Encoding = .utf8
        let lastReadLength = Mutex<Int?>(nil)

        override func read(from fileWrapper: FileWrapper) throws -> String {
            let text = String(decoding: try fileWrapper.regularFileContents, as: UTF8.self)
            lastReadLength.withLock { $0 = text.count }
            return text
        }
        override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
            FileWrapper(regularFileWithContents: Data(content.utf8))
        }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The stored `var`s declared directly in the body of each `Document` subclass of `source`.
    static func storedVariables(in source: String) -> [String] {
        var found: [String] = []
        let lines = source.components(separatedBy: "\n")
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.range(of: #"class \w+\s*:\s*(\w+\.)?Document<"#, options: .regularExpression) != nil,
                line.contains("{")
            else { continue }
            let className = line.components(separatedBy: "class ")[1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            var depth = line.filter { $0 == "{" }.count - line.filter { $0 == "}" }.count
            while index < lines.count && depth > 0 {
                let member = lines[index]
                index += 1
                let trimmed = member.trimmingCharacters(in: .whitespaces)
                let isStoredVar =
                    depth == 1
                    && trimmed.range(of: #"^((public|private|fileprivate|internal|package|nonisolated|lazy|weak|unowned|static|class|final|nonisolated\(unsafe\)|private\(set\)|public private\(set\))\s+)*var\s"#, options: .regularExpression) != nil
                    && !trimmed.contains("{") && !trimmed.hasPrefix("static") && !trimmed.hasPrefix("class ")
                if isStoredVar { found.append("\(className): \(trimmed)") }
                depth += member.filter { $0 == "{" }.count - member.filter { $0 == "}" }.count
            }
        }
        return found
    }

    @Test("the check finds a stored var in a Document subclass, and not a computed one")
    func theCheckFindsStoredVariables() {
        let source = """
            final class Bad: Document<String>, @unchecked Sendable {
                var count = 0
                private(set) var name: String = ""
                override var format: FormatDescription? { nil }
                var computed: Int {
                    1
                }
            }
            """
        #expect(Self.storedVariables(in: source) == ["Bad: var count = 0", #"Bad: private(set) var name: String = """#])
    }

    @Test("no Document subclass in the repository declares a stored var")
    func noSubclassDeclaresAStoredVariable() throws {
        var offenders: [String] = []
        var subclassFiles = 0
        for folder in ["Sources", "Examples", "Tests", "Benchmarks"] {
            let root = Self.repository.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in walker where file.pathExtension == "swift" && file.lastPathComponent != "DocumentSubclassRuleTests.swift" {
                let source = try String(contentsOf: file, encoding: .utf8)
                if source.contains(": Document<") { subclassFiles += 1 }
                offenders += Self.storedVariables(in: source).map { "\(file.lastPathComponent): \($0)" }
            }
        }
        #expect(subclassFiles >= 5)  // the walk found the repository's documents
        #expect(offenders.isEmpty, "stored vars in Document subclasses (see DocumentConcurrency.md): \(offenders)")
    }
}
