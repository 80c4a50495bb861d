import DocumentKitSystem
import DocumentKitTesting
import Foundation
import FormatVersioning
import Testing

/// Thousands of mutated manifests fed to the reader: no crash, no hang, an error naming the file
/// for every invalid one, and every accepted one written back to the same manifest.
///
/// Deterministic: the seed is printed; set `DOCUMENTKIT_FUZZ_SEED` to replay another.
@Suite struct ManifestFuzzTests {
    static let seed = SeededRandom.seed(environment: "DOCUMENTKIT_FUZZ_SEED", default: 20_261_122)
    static let caseCount = 4_000

    /// Valid manifests to mutate: the manifest fixtures, and notes written by every version.
    static func seeds() throws -> [Data] {
        let formats = Fixtures.repository.appendingPathComponent("Formats")
        let paths = [
            "manifest/v1/fixtures/written/everything.json", "manifest/v1/fixtures/written/single-file.json",
            "manifest/v1/fixtures/hand-made/compact.json", "manifest/v1/fixtures/hand-made/future-optional-features.json",
            "manifest/v1/fixtures/hand-made/older-without-versions.json", "manifest/v1/fixtures/packages/complete.sketch/Info.json",
            "notes/v1/fixtures/trip-to-lisbon.note/Info.json", "notes/v2/fixtures/receipt.note/Info.json",
            "notes/v3/fixtures/packing-list.note/Info.json", "notes/future/v4-optional-features.note/Info.json",
        ]
        return try paths.map { try Data(contentsOf: formats.appendingPathComponent($0)) }
    }

    /// A mutated manifest and what reading it must do.
    struct Mutant {
        enum Expectation { case valid, invalid, either }
        var kind: String
        var bytes: [UInt8]
        var expectation: Expectation
    }

    @Test("thousands of mutated manifests: never a crash or a hang, an error for every invalid one, the rest written back the same")
    func mutatedManifests() throws {
        print("ManifestFuzzTests: seed \(Self.seed), \(Self.caseCount) cases (DOCUMENTKIT_FUZZ_SEED=\(Self.seed) replays them)")
        let seeds = try Self.seeds()
        for seed in seeds { _ = try DocumentManifest(jsonData: seed, path: "seed") }  // the seeds are valid
        var random = SeededRandom(seed: Self.seed)
        var counts: [String: (accepted: Int, refused: Int)] = [:]
        var slowest: Duration = .zero
        let clock = ContinuousClock()
        for index in 0..<Self.caseCount {
            let mutant = Self.mutate(Array(seeds.randomElement(using: &random)!), using: &random)
            let path = "/fuzz/\(index)-\(mutant.kind)/Info.json"
            var accepted: DocumentManifest?
            var refusal: DocumentKitError?
            let elapsed = clock.measure {
                do throws(DocumentKitError) { accepted = try DocumentManifest(jsonData: Data(mutant.bytes), path: path) } catch {
                    refusal = error
                }
            }
            slowest = max(slowest, elapsed)
            let label = "case \(index) (\(mutant.kind), seed \(Self.seed))"
            if let refusal {
                counts[mutant.kind, default: (0, 0)].refused += 1
                #expect(mutant.expectation != .valid, "\(label): a valid manifest was refused: \(refusal)")
                #expect(refusal.code == .corruptData && refusal.description.contains(path), "\(label): \(refusal)")
            } else if let accepted {
                counts[mutant.kind, default: (0, 0)].accepted += 1
                #expect(mutant.expectation != .invalid, "\(label): an invalid manifest was accepted: \(Self.excerpt(mutant.bytes))")
                // What the reader accepts, the writer writes, and reads back the same.
                let written = try accepted.jsonData()
                #expect(try DocumentManifest(jsonData: written, path: path) == accepted, "\(label): the round trip changed it")
            }
        }
        print("ManifestFuzzTests: slowest case \(slowest); accepted/refused by mutation: "
            + counts.keys.sorted().map { "\($0) \(counts[$0]!.accepted)/\(counts[$0]!.refused)" }.joined(separator: ", "))
        #expect(slowest < .seconds(1), "a case took \(slowest): the reader must stay bounded")
        #expect(counts.values.map(\.refused).reduce(0, +) > Self.caseCount / 2)
    }

    // MARK: Mutations

    static func mutate(_ seed: [UInt8], using random: inout SeededRandom) -> Mutant {
        switch Int.random(in: 0..<11, using: &random) {
        case 0:  // cut before the closing brace: never a whole object
            let end = seed.lastIndex(of: UInt8(ascii: "}"))!
            return Mutant(kind: "truncated", bytes: Array(seed[..<Int.random(in: 0..<end, using: &random)]), expectation: .invalid)
        case 1:
            var bytes = seed
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            }
            return Mutant(kind: "bit-flipped", bytes: bytes, expectation: .either)
        case 2:
            var bytes = seed
            let at = Int.random(in: 0..<bytes.count, using: &random)
            if Bool.random(using: &random) {
                bytes.remove(at: at)
            } else {
                bytes.insert(bytes[at], at: at)
            }
            return Mutant(kind: "byte-deleted-or-doubled", bytes: bytes, expectation: .either)
        case 3:
            let bad: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82], [0x80]]
            var bytes = seed
            bytes.insert(contentsOf: bad.randomElement(using: &random)!, at: Int.random(in: 0...bytes.count, using: &random))
            return Mutant(kind: "invalid-utf8", bytes: bytes, expectation: .invalid)
        case 4: return wrongType(seed, using: &random)
        case 5:
            let depth = [1, 30, 62, 63, 64, 65, 200, 5_000, 200_000].randomElement(using: &random)!
            // The manifest object is level 1: `depth` arrays inside it reach level depth + 1.
            let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return Mutant(kind: "deep-nesting", bytes: inserting("\"deep\" : \(value), ", into: seed), expectation: depth <= 63 ? .valid : .invalid)
        case 6:
            let huge = ["1e400", "-1e-400", "99999999999999999999999", "2147483648", "1" + String(repeating: "0", count: 50_000), "-0", "12.5"]
                .randomElement(using: &random)!
            if Bool.random(using: &random) {  // a field the manifest doesn't define keeps any number, as its text
                return Mutant(kind: "huge-number-kept", bytes: inserting("\"big\" : \(huge), ", into: seed), expectation: .valid)
            }
            return Mutant(kind: "huge-version", bytes: replacingValue(of: "formatVersion", with: huge, in: seed), expectation: .invalid)
        case 7: return longString(seed, using: &random)
        case 8:
            let names = [#""\ud800""#, #""a/../b""#, #""""#, #""a\u0000b""#, #""/absolute""#, #""a//b""#, #""\udfff/x""#]
            let record = #"{"sha256" : "0000000000000000000000000000000000000000000000000000000000000000", "size" : 1}"#
            let members = "{\(names.randomElement(using: &random)!) : \(record)}"
            let bytes = hasKey("members", seed) ? replacingValue(of: "members", with: members, in: seed) : inserting("\"members\" : \(members), ", into: seed)
            return Mutant(kind: "bad-member-name", bytes: bytes, expectation: .invalid)
        case 9:
            let key = ["format", "formatVersion", "writer", "documentIdentifier"].randomElement(using: &random)!
            let value = key == "writer" ? #"{"name" : "a", "version" : "1"}"# : key == "formatVersion" ? "1" : #""org.example.twice""#
            return Mutant(kind: "duplicate-key", bytes: inserting("\"\(key)\" : \(value), ", into: seed), expectation: .invalid)
        default:
            return Mutant(kind: "unchanged", bytes: seed, expectation: .valid)
        }
    }

    /// A known field with a value of the wrong type or out of range.
    static func wrongType(_ seed: [UInt8], using random: inout SeededRandom) -> Mutant {
        let wrong: [String: [String]] = [
            "format": ["1", "[]", "{}", "null", "true", #""""#, #""not-reverse-dns""#, #""org..x""#],
            "formatVersion": [#""3""#, "3.5", "-1", "0", "null", "[]", "true", "3e0"],
            "minReaderVersion": [#""1""#, "0", "{}", "1.0"],
            "requiredFeatures": [#""x""#, "1", "{}", "[1]", #"[""]"#, "[null]", #"["a", "a"]"#],
            "optionalFeatures": [#""x""#, "[[]]", #"["\u0001"]"#],
            "appliedMigrations": ["{}", "[true]", #"["m", "m"]"#],
            "writer": [#""x""#, "[]", #"{"name" : 1, "version" : "1"}"#, #"{"name" : "a"}"#, #"{"name" : "", "version" : "1"}"#],
            "documentIdentifier": ["1", #""""#, "null"],
            "members": ["[]", #""x""#, #"{"a" : 1}"#, #"{"a" : {"size" : 1}}"#, #"{"a" : {"size" : -1, "sha256" : "00"}}"#,
                        #"{"a" : {"size" : 1.5, "sha256" : "0000000000000000000000000000000000000000000000000000000000000000"}}"#],
        ]
        let key = wrong.keys.sorted().randomElement(using: &random)!
        let value = wrong[key]!.randomElement(using: &random)!
        let bytes = hasKey(key, seed) ? replacingValue(of: key, with: value, in: seed) : inserting("\"\(key)\" : \(value), ", into: seed)
        return Mutant(kind: "wrong-type", bytes: bytes, expectation: .invalid)
    }

    /// Long strings: kept in a field the manifest doesn't define; refused where the manifest has limits.
    static func longString(_ seed: [UInt8], using random: inout SeededRandom) -> Mutant {
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            let text = String(repeating: "é", count: 50_000)
            return Mutant(kind: "long-string-kept", bytes: inserting("\"notes\" : \"\(text)\", ", into: seed), expectation: .valid)
        case 1:
            let name = String(repeating: "f", count: 256)
            return Mutant(kind: "long-feature", bytes: replacingOrInserting("optionalFeatures", with: "[\"\(name)\"]", in: seed), expectation: .invalid)
        case 2:
            let key = String(repeating: "k", count: 1_025)
            return Mutant(kind: "long-key", bytes: inserting("\"\(key)\" : 1, ", into: seed), expectation: .invalid)
        case 3:
            let name = String(repeating: "n", count: 256)
            return Mutant(kind: "long-writer-name", bytes: replacingValue(of: "writer", with: "{\"name\" : \"\(name)\", \"version\" : \"1\"}", in: seed), expectation: .invalid)
        default:
            // Rarely, more than the 8 MiB a manifest may have.
            let size = Int.random(in: 0..<40, using: &random) == 0 ? 9 << 20 : 4_000
            let text = String(repeating: "x", count: size)
            return Mutant(kind: "long-string-\(size > 8 << 20 ? "over-limit" : "kept")", bytes: inserting("\"blob\" : \"\(text)\", ", into: seed),
                          expectation: size > 8 << 20 ? .invalid : .valid)
        }
    }

    // MARK: Text surgery on a valid manifest

    /// `field` inserted as the first member of the top-level object.
    static func inserting(_ field: String, into seed: [UInt8]) -> [UInt8] {
        var bytes = seed
        let brace = bytes.firstIndex(of: UInt8(ascii: "{"))!
        bytes.insert(contentsOf: Array(field.utf8), at: brace + 1)
        return bytes
    }

    static func hasKey(_ key: String, _ seed: [UInt8]) -> Bool { valueRange(of: key, in: seed) != nil }

    static func replacingOrInserting(_ key: String, with value: String, in seed: [UInt8]) -> [UInt8] {
        hasKey(key, seed) ? replacingValue(of: key, with: value, in: seed) : inserting("\"\(key)\" : \(value), ", into: seed)
    }

    /// The value of the top-level `key` replaced by `value` (the key is inserted if missing).
    static func replacingValue(of key: String, with value: String, in seed: [UInt8]) -> [UInt8] {
        guard let range = valueRange(of: key, in: seed) else { return inserting("\"\(key)\" : \(value), ", into: seed) }
        var bytes = seed
        bytes.replaceSubrange(range, with: Array(value.utf8))
        return bytes
    }

    /// Where the value of the top-level `key` is: found by scanning the text at depth 1.
    static func valueRange(of key: String, in bytes: [UInt8]) -> Range<Int>? {
        var depth = 0
        var index = 0
        var inString = false
        var stringStart = 0
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 1, String(decoding: bytes[(stringStart + 1)..<index], as: UTF8.self) == key,
                        let colon = bytes[(index + 1)...].firstIndex(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 }),
                        bytes[colon] == UInt8(ascii: ":")
                    {
                        let start = bytes[(colon + 1)...].firstIndex(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 })!
                        return start..<endOfValue(from: start, in: bytes)
                    }
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                stringStart = index
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                depth -= 1
            }
            index += 1
        }
        return nil
    }

    /// The end of the JSON value that starts at `start`.
    static func endOfValue(from start: Int, in bytes: [UInt8]) -> Int {
        var depth = 0
        var index = start
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return index + 1 }
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                depth -= 1
                if depth == 0 { return index + 1 }
            } else if depth == 0 && (byte == UInt8(ascii: ",") || byte == 0x0A || byte == 0x20) {
                return index
            }
            index += 1
        }
        return index
    }

    static func excerpt(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(300), as: UTF8.self)
        return bytes.count > 300 ? text + "… (\(bytes.count) bytes)" : text
    }
}
