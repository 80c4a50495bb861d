#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitSystem
import DocumentKitTesting
import Foundation
import Testing

/// Hundreds of mutated packages opened by a `Document` with a format: never a crash or a hang,
/// an error naming the package for every invalid one, and the package left as it was.
///
/// Deterministic: the seed is printed; set `DOCUMENTKIT_FUZZ_SEED` to replay another.
@Suite struct PackageFuzzTests {
    static let seed = SeededRandom.seed(environment: "DOCUMENTKIT_FUZZ_SEED", default: 20_261_122)
    static let caseCount = 400

    /// How a package was damaged, and what opening it must do.
    enum Expectation { case opens, fails, either }

    @Test("hundreds of mutated packages: never a crash or a hang, an error for every invalid one, nothing written")
    func mutatedPackages() async throws {
        print("PackageFuzzTests: seed \(Self.seed), \(Self.caseCount) cases (DOCUMENTKIT_FUZZ_SEED=\(Self.seed) replays them)")
        let directory = try TemporaryDirectory(prefix: "package-fuzz")
        let base = directory.appending("base.pkg")
        let document = VersionedTextDocument(
            fileURL: base, content: VersionedText(title: "Fuzz", text: "the text", tags: ["a"]), readerVersion: 2)
        try await document.save()
        try Data(repeating: 7, count: 300).write(to: base.appendingPathComponent("blob.bin"))
        try FileManager.default.createDirectory(at: base.appendingPathComponent("sub"), withIntermediateDirectories: false)
        try Data("nested".utf8).write(to: base.appendingPathComponent("sub/nested.txt"))
        let reopened = VersionedTextDocument(fileURL: base, readerVersion: 2)
        try await reopened.open()
        try reopened.update { $0.text += "!" }
        try await reopened.save()  // records blob.bin and sub/nested.txt too
        let listed = try #require(reopened.manifest?.members).keys.sorted()
        #expect(listed == ["blob.bin", "sub/nested.txt", "text.txt"])

        var random = SeededRandom(seed: Self.seed)
        var outcomes: [String: (opened: Int, failed: Int)] = [:]
        var slowest: Duration = .zero
        let clock = ContinuousClock()
        for index in 0..<Self.caseCount {
            let url = directory.appending("case-\(index).pkg")
            try FileManager.default.copyItem(at: base, to: url)
            let (kind, expectation) = try Self.damage(url, members: listed, using: &random)
            let before = try PackageSnapshot(url)
            var failure: DocumentKitError?
            let elapsed = await clock.measure {
                do throws(DocumentKitError) {
                    try await VersionedTextDocument(fileURL: url, readerVersion: 2).open()
                } catch {
                    failure = error
                }
            }
            slowest = max(slowest, elapsed)
            let label = "case \(index) (\(kind), seed \(Self.seed))"
            if let failure {
                outcomes[kind, default: (0, 0)].failed += 1
                #expect(expectation != .opens, "\(label): a valid package was refused: \(failure)")
                #expect(failure.description.contains(url.path), "\(label): the error doesn't name the package: \(failure)")
            } else {
                outcomes[kind, default: (0, 0)].opened += 1
                #expect(expectation != .fails, "\(label): a damaged package opened")
            }
            #expect(try PackageSnapshot(url) == before, "\(label): opening changed the package")
            try Self.remove(url)
        }
        print("PackageFuzzTests: slowest case \(slowest); opened/failed by mutation: "
            + outcomes.keys.sorted().map { "\($0) \(outcomes[$0]!.opened)/\(outcomes[$0]!.failed)" }.joined(separator: ", "))
        #expect(slowest < .seconds(2), "a case took \(slowest)")
    }

    /// Damages the package at `url` one way, chosen at random.
    static func damage(_ url: URL, members: [String], using random: inout SeededRandom) throws -> (String, Expectation) {
        let manifest = url.appendingPathComponent("Info.json")
        let member = url.appendingPathComponent(members.randomElement(using: &random)!)
        var bytes = [UInt8](try Data(contentsOf: manifest))
        switch Int.random(in: 0..<12, using: &random) {
        case 0:
            let end = bytes.lastIndex(of: UInt8(ascii: "}"))!
            try Data(bytes[..<Int.random(in: 0..<end, using: &random)]).write(to: manifest)
            return ("manifest-truncated", .fails)
        case 1:
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            }
            try Data(bytes).write(to: manifest)
            return ("manifest-bit-flipped", .either)
        case 2:
            bytes.insert(contentsOf: [0xED, 0xA0, 0x80], at: Int.random(in: 0...bytes.count, using: &random))
            try Data(bytes).write(to: manifest)
            return ("manifest-invalid-utf8", .fails)
        case 3:
            var contents = [UInt8](try Data(contentsOf: member))
            contents[Int.random(in: 0..<contents.count, using: &random)] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            try Data(contents).write(to: member)
            return ("member-bit-flipped", .fails)
        case 4:
            let contents = try Data(contentsOf: member)
            try contents.prefix(Int.random(in: 0..<contents.count, using: &random)).write(to: member)
            return ("member-truncated", .fails)
        case 5:
            try FileManager.default.removeItem(at: member)
            return ("member-removed", .fails)
        case 6:
            try FileManager.default.removeItem(at: member)
            if Bool.random(using: &random) {
                try FileManager.default.createDirectory(at: member, withIntermediateDirectories: false)
            } else {
                try FileManager.default.createSymbolicLink(atPath: member.path, withDestinationPath: "/etc/hostname")
            }
            return ("member-not-a-file", .fails)
        case 7:
            let name = "extra-\(UInt32.random(in: 0...UInt32.max, using: &random)).bin"
            try Data(repeating: 1, count: Int.random(in: 0..<100, using: &random)).write(to: url.appendingPathComponent(name))
            return ("unlisted-member", .opens)
        case 8:
            // A name no Swift string holds: a save would lose the member, so the open refuses.
            let path = Array(url.path.utf8) + Array("/".utf8) + [0xFF, UInt8.random(in: 0x80...0xFE, using: &random), 0]
            let fd = path.withUnsafeBufferPointer { raw in
                raw.baseAddress!.withMemoryRebound(to: CChar.self, capacity: raw.count) { Glibc.open($0, O_CREAT | O_WRONLY, 0o644) }
            }
            Glibc.close(fd)
            return ("member-name-not-utf8", .fails)
        case 9:
            try FileManager.default.removeItem(at: manifest)
            if Bool.random(using: &random) { try FileManager.default.createDirectory(at: manifest, withIntermediateDirectories: false) }
            return ("manifest-missing", .fails)
        case 10:
            let escaping = ["../outside.txt", "/etc/passwd", "a/./b", "sub//nested.txt"].randomElement(using: &random)!
            let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"text.txt\" :", with: "\"\(escaping)\" :")
            try Data(text.utf8).write(to: manifest)
            return ("member-path-escaping", .fails)
        default:
            return ("unchanged", .opens)
        }
    }

    /// Removes a case's package, names that aren't UTF-8 included.
    static func remove(_ url: URL) throws {
        let package = Array(url.path.utf8)
        if let directory = opendir(url.path) {
            while let entry = readdir(directory) {
                let name = DirectoryEntry.withNameBytes(of: entry) { Array($0) }
                guard name.first == 0xFF else { continue }
                let path = package + Array("/".utf8) + name + [0]
                _ = path.withUnsafeBufferPointer { raw in
                    raw.baseAddress!.withMemoryRebound(to: CChar.self, capacity: raw.count) { Glibc.unlink($0) }
                }
            }
            closedir(directory)
        }
        try FileManager.default.removeItem(at: url)
    }
}

/// Every regular file and symbolic link of a package, by relative path, with its bytes (or
/// destination). Names that aren't UTF-8 can't be reached through `FileManager`: they are left out.
struct PackageSnapshot: Equatable {
    var items: [String: Data] = [:]

    init(_ url: URL) throws {
        let root = url.standardizedFileURL.path + "/"
        let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey])
        while let item = enumerator?.nextObject() as? URL {
            guard let values = try? item.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey]) else { continue }
            let relative = String(item.standardizedFileURL.path.dropFirst(root.count))
            if values.isSymbolicLink == true {
                items[relative] = Data(try FileManager.default.destinationOfSymbolicLink(atPath: item.path).utf8)
            } else if values.isRegularFile == true {
                items[relative] = try Data(contentsOf: item)
            }
        }
    }
}
