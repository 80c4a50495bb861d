import FileVersions
import Foundation
import Testing

/// A UTC instant from ISO 8601 text, for expected values.
private func utc(_ text: String) -> Date {
    ISO8601DateFormatter().date(from: text)!
}

@Suite struct ConflictCopyNameTests {
    // MARK: Real Syncthing names

    /// Names made by a real Syncthing pair (syncthing v1.19.2-ds1, Debian bookworm, two nodes on
    /// loopback, configured as `Tests/NotesTests/SyncthingPair.swift` does) on 2026-11-22: files with and without an
    /// extension, and the package `trip.note/` with `body.md` and `Info.json` edited on both sides.
    /// Each copy carries the short id of the device whose version won (a = OUKVBBE, b = MYTS6AX;
    /// in the second pair a = 2PN5G6E, b = VB34PQE), and the members' copies stay inside the package.
    static let realSyncthingNames: [(copy: String, original: String, device: String, date: String)] = [
        ("notes.sync-conflict-20261122-060329-MYTS6AX.txt", "notes.txt", "MYTS6AX", "2026-11-22T06:03:29Z"),
        ("README.sync-conflict-20261122-060329-OUKVBBE", "README", "OUKVBBE", "2026-11-22T06:03:29Z"),
        // trip.note/ members: body.md won by a, Info.json won by b, so the two copies carry different ids.
        ("body.sync-conflict-20261122-060329-OUKVBBE.md", "body.md", "OUKVBBE", "2026-11-22T06:03:29Z"),
        ("Info.sync-conflict-20261122-060329-MYTS6AX.json", "Info.json", "MYTS6AX", "2026-11-22T06:03:29Z"),
        // One package conflict with four 8 MiB members: the members' copies are stamped 060450 to 060453.
        ("body.sync-conflict-20261122-060450-2PN5G6E.md", "body.md", "2PN5G6E", "2026-11-22T06:04:50Z"),
        ("Info.sync-conflict-20261122-060450-VB34PQE.json", "Info.json", "VB34PQE", "2026-11-22T06:04:50Z"),
        ("m2.sync-conflict-20261122-060451-VB34PQE.bin", "m2.bin", "VB34PQE", "2026-11-22T06:04:51Z"),
        ("m3.sync-conflict-20261122-060452-VB34PQE.bin", "m3.bin", "VB34PQE", "2026-11-22T06:04:52Z"),
        ("m1.sync-conflict-20261122-060453-VB34PQE.bin", "m1.bin", "VB34PQE", "2026-11-22T06:04:53Z"),
        // Another such conflict: even the two small members' copies are stamped two seconds apart.
        ("body.sync-conflict-20261122-060550-2PN5G6E.md", "body.md", "2PN5G6E", "2026-11-22T06:05:50Z"),
        ("Info.sync-conflict-20261122-060552-VB34PQE.json", "Info.json", "VB34PQE", "2026-11-22T06:05:52Z"),
        // From the research run of the same version (the Syncthing pair research, section 2 (d)).
        ("conf1.sync-conflict-20261122-013357-QOVBUKW.txt", "conf1.txt", "QOVBUKW", "2026-11-22T01:33:57Z"),
        ("conf2.sync-conflict-20261122-013405-5XASOEK.md", "conf2.md", "5XASOEK", "2026-11-22T01:34:05Z"),
        ("conf3.sync-conflict-20261122-013408-QOVBUKW", "conf3", "QOVBUKW", "2026-11-22T01:34:08Z"),
    ]

    @Test func namesMadeByARealSyncthingParse() throws {
        for real in Self.realSyncthingNames {
            let parsed = try #require(ConflictCopyName(parsing: real.copy), "\(real.copy)")
            #expect(parsed.engine == .syncthing)
            #expect(parsed.copyName == real.copy)
            #expect(parsed.originalName == real.original)
            #expect(parsed.device == real.device)
            #expect(parsed.date == utc(real.date))
            #expect(parsed.user == nil)
            #expect(parsed.number == nil)
        }
    }

    // MARK: Syncthing

    @Test func syncthingCopyOfAPackageNamesThePackage() throws {
        let parsed = try #require(ConflictCopyName(parsing: "trip.sync-conflict-20261122-101500-ABCDEFG.note"))
        #expect(parsed.originalName == "trip.note")
        #expect(parsed.device == "ABCDEFG")
        #expect(parsed.date == utc("2026-11-22T10:15:00Z"))
    }

    @Test func syncthingMovesOnlyTheLastExtension() throws {
        let parsed = try #require(ConflictCopyName(parsing: "archive.tar.sync-conflict-20261122-101500-A2B3C4D.gz"))
        #expect(parsed.originalName == "archive.tar.gz")
        #expect(ConflictCopyName(parsing: "archive.sync-conflict-20261122-101500-A2B3C4D.tar.gz") == nil)
    }

    @Test func syncthingNeedsAValidDateAndTime() {
        for name in [
            "a.sync-conflict-20261322-101500-ABCDEFG.md",  // month 13
            "a.sync-conflict-20260230-101500-ABCDEFG.md",  // 30 February
            "a.sync-conflict-20250229-101500-ABCDEFG.md",  // 29 February, not a leap year
            "a.sync-conflict-20261100-101500-ABCDEFG.md",  // day 0
            "a.sync-conflict-20261122-241500-ABCDEFG.md",  // hour 24
            "a.sync-conflict-20261122-106000-ABCDEFG.md",  // minute 60
            "a.sync-conflict-20261122-101560-ABCDEFG.md",  // second 60
            "a.sync-conflict-00001122-101500-ABCDEFG.md",  // year 0
        ] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
        #expect(ConflictCopyName(parsing: "a.sync-conflict-20240229-235959-ABCDEFG.md")?.date == utc("2024-02-29T23:59:59Z"))
    }

    @Test func syncthingNearMissesDoNotParse() {
        for name in [
            ".sync-conflict-20261122-101500-ABCDEFG.md",  // empty base
            "report.sync-conflict.md",
            "report.sync-conflict-20261122-101500.md",  // no device
            "report.sync-conflict-20261122-101500-ABCDEF.md",  // 6 characters
            "report.sync-conflict-20261122-101500-ABCDEFGH.md",  // 8 characters
            "report.sync-conflict-20261122-101500-abcdefg.md",  // not base32
            "report.sync-conflict-20261122-101500-ABCDEF1.md",  // 1 is not base32
            "report.sync-conflict-20261122-101500-ABCDEF8.md",  // 8 is not base32
            "report.sync-conflict-2026112-101500-ABCDEFG.md",
            "report.sync-conflict-20261122_101500-ABCDEFG.md",
            "report.sync-conflict-20261122-101500-ABCDEFG-x.md",
            "report-sync-conflict-20261122-101500-ABCDEFG.md",
        ] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
    }

    // MARK: Dropbox

    @Test func dropboxCopyNamesTheUser() throws {
        let parsed = try #require(ConflictCopyName(parsing: "notes (Alice's conflicted copy 2026-11-22).txt"))
        #expect(parsed.engine == .dropbox)
        #expect(parsed.originalName == "notes.txt")
        #expect(parsed.user == "Alice")
        #expect(parsed.date == utc("2026-11-22T00:00:00Z"))
        #expect(parsed.device == nil)
        #expect(parsed.number == nil)
    }

    @Test func dropboxUserIsSplitAtTheLastPossessive() throws {
        let parsed = try #require(ConflictCopyName(parsing: "trip (Bob's MacBook Pro's conflicted copy 2026-11-22).note"))
        #expect(parsed.originalName == "trip.note")
        #expect(parsed.user == "Bob's MacBook Pro")
    }

    @Test func dropboxAcceptsTheTypographicApostrophe() throws {
        let parsed = try #require(ConflictCopyName(parsing: "body (Zoë’s iMac’s conflicted copy 2026-11-22).md"))
        #expect(parsed.originalName == "body.md")
        #expect(parsed.user == "Zoë’s iMac")
    }

    @Test func dropboxCopyWithoutAUser() throws {
        let parsed = try #require(ConflictCopyName(parsing: "README (conflicted copy 2026-11-22)"))
        #expect(parsed.engine == .dropbox)
        #expect(parsed.originalName == "README")
        #expect(parsed.user == nil)
        #expect(parsed.date == utc("2026-11-22T00:00:00Z"))
    }

    @Test func dropboxKeepsParenthesesOfTheBaseAndOfTheUser() throws {
        let base = try #require(ConflictCopyName(parsing: "Report (final) (Alice's conflicted copy 2026-11-22).docx"))
        #expect(base.originalName == "Report (final).docx")
        #expect(base.user == "Alice")
        let user = try #require(ConflictCopyName(parsing: "Report (Bob (work)'s conflicted copy 2026-11-22).docx"))
        #expect(user.originalName == "Report.docx")
        #expect(user.user == "Bob (work)")
    }

    @Test func dropboxKeepsEveryExtension() throws {
        let parsed = try #require(ConflictCopyName(parsing: "archive (conflicted copy 2026-11-22).tar.gz"))
        #expect(parsed.originalName == "archive.tar.gz")
    }

    @Test func dropboxNearMissesDoNotParse() {
        for name in [
            "my (conflicted copy).md",
            "my (conflicted copy 2026-13-01).md",
            "my (conflicted copy 2026-02-30).md",
            "my (conflicted copy 26-11-22).md",
            "my (Alice conflicted copy 2026-11-22).md",
            "my ('s conflicted copy 2026-11-22).md",  // empty user
            " (conflicted copy 2026-11-22).md",  // empty base
            "(conflicted copy 2026-11-22).md",
            "my(conflicted copy 2026-11-22).md",
            "my (conflicted copy 2026-11-22)x.md",
            "my (conflicted copy 2026-11-22.md",
            "my (copy 2026-11-22).md",
        ] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
    }

    // MARK: Nextcloud and ownCloud

    @Test func nextcloudCopyWithoutAUser() throws {
        let parsed = try #require(ConflictCopyName(parsing: "Warren2 (conflicted copy 2021-06-16 143218).QPH"))
        #expect(parsed.engine == .nextcloud)
        #expect(parsed.originalName == "Warren2.QPH")
        #expect(parsed.user == nil)
        #expect(parsed.date == utc("2021-06-16T14:32:18Z"))
    }

    @Test func nextcloudCopyNamesTheUser() throws {
        let parsed = try #require(ConflictCopyName(parsing: "trip (conflicted copy alice smith 2026-11-22 101500).note"))
        #expect(parsed.engine == .nextcloud)
        #expect(parsed.originalName == "trip.note")
        #expect(parsed.user == "alice smith")
        #expect(parsed.date == utc("2026-11-22T10:15:00Z"))
    }

    @Test func nextcloudCopyOfAHiddenFileKeepsItsName() throws {
        let parsed = try #require(ConflictCopyName(parsing: ".hidden (conflicted copy 2026-11-22 101500)"))
        #expect(parsed.originalName == ".hidden")
    }

    @Test func nextcloudNearMissesDoNotParse() {
        for name in [
            "a (conflicted copy 2026-11-22 246000).md",
            "a (conflicted copy 2026-11-22 10150).md",
            "a (conflicted copy 2026-11-22  101500).md",
            "a (conflicted copy  2026-11-22 101500).md",  // an empty user
            "a (conflicted copy 2026-11-22T101500).md",
        ] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
    }

    @Test func ownCloudLegacyCopy() throws {
        let parsed = try #require(ConflictCopyName(parsing: "body_conflict-20261122-101500.md"))
        #expect(parsed.engine == .ownCloudLegacy)
        #expect(parsed.originalName == "body.md")
        #expect(parsed.date == utc("2026-11-22T10:15:00Z"))
        let noExtension = try #require(ConflictCopyName(parsing: "README_conflict-20261122-101500"))
        #expect(noExtension.originalName == "README")
        #expect(ConflictCopyName(parsing: "README_conflict-20261122-101500x") == nil)
        #expect(ConflictCopyName(parsing: "README_conflict-20261122-251500") == nil)
        #expect(ConflictCopyName(parsing: "_conflict-20261122-101500.md") == nil)
    }

    // MARK: rclone

    @Test func rcloneNumberedCopyKeepsTheWholeName() throws {
        let parsed = try #require(ConflictCopyName(parsing: "file.txt.conflict1"))
        #expect(parsed.engine == .rclone)
        #expect(parsed.originalName == "file.txt")
        #expect(parsed.number == 1)
        #expect(parsed.date == nil)
        #expect(ConflictCopyName(parsing: "trip.note.conflict12")?.number == 12)
        #expect(ConflictCopyName(parsing: "trip.note.conflict12")?.originalName == "trip.note")
    }

    @Test func rclonePathCopies() throws {
        for (name, original, number) in [
            ("file.txt.path1", "file.txt", 1), ("file.txt.path2", "file.txt", 2),
            ("file.txt..path1", "file.txt", 1), ("README..path2", "README", 2),
        ] {
            let parsed = try #require(ConflictCopyName(parsing: name))
            #expect(parsed.engine == .rclone)
            #expect(parsed.originalName == original)
            #expect(parsed.number == number)
        }
    }

    @Test func rcloneNearMissesDoNotParse() {
        for name in [
            "notes.conflict", "x.conflict0", "x.conflict01", "a.path3", "a.path0", "a.path12", "a.path",
            ".conflict1", ".path1", "..path1", "x.conflict-1", "x.conflictA", "xconflict1", "x.conflict99999999999999999999",
        ] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
    }

    @Test("names whose original would be . or .. never parse as copies")
    func dotNamesNeverParse() {
        for name in ["....path1", "...path2", "...conflict1", "..conflict3", "..sync-conflict-20261122-101500-ABCDEFG", ". (conflicted copy 2026-11-22)"] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
    }

    @Test("a name is a copy only beside its original of the same kind, and only for the engines named")
    func aCopyNeedsItsOriginalOfTheSameKindAndItsEngine() {
        let folder: [String: Bool] = ["results": false, "trip.note": true]
        let kind = { (name: String) in folder[name] }
        let all = ConflictCopyName.Engine.all
        #expect(ConflictCopyName(parsing: "results.conflict1", isFolder: false, engines: all, originalIsFolder: kind) != nil)
        #expect(ConflictCopyName(parsing: "photo.conflict1", isFolder: false, engines: all, originalIsFolder: kind) == nil)
        #expect(ConflictCopyName(parsing: "results.conflict1", isFolder: true, engines: all, originalIsFolder: kind) == nil)
        #expect(ConflictCopyName(parsing: "trip.note.path1", isFolder: false, engines: all, originalIsFolder: kind) == nil)
        #expect(ConflictCopyName(parsing: "trip.note.path1", isFolder: true, engines: all, originalIsFolder: kind) != nil)
        #expect(ConflictCopyName(parsing: "results.conflict1", isFolder: false, engines: [.syncthing], originalIsFolder: kind) == nil)
        #expect(ConflictCopyName(parsing: "results.conflict1", isFolder: false, engines: [.rclone], originalIsFolder: kind) != nil)
    }

    // MARK: All engines

    @Test func ordinaryNamesDoNotParse() {
        for name in [
            "", "notes.txt", "trip.note", "Info.json", "README", ".hidden", "archive.tar.gz",
            "my (conflicted copy).md", "report.sync-conflict.md", "a.path3", "conflict.txt", "conflicted copy 2026-11-22.md",
            "photo (1).jpg", "a/b.sync-conflict-20261122-101500-ABCDEFG.md",
        ] {
            #expect(ConflictCopyName(parsing: name) == nil, "\(name)")
        }
    }

    @Test func aCopyOfACopyParsesToTheOuterCopy() throws {
        let dropboxTwice = try #require(
            ConflictCopyName(parsing: "a (conflicted copy 2026-11-21) (Alice's conflicted copy 2026-11-22).md"))
        #expect(dropboxTwice.originalName == "a (conflicted copy 2026-11-21).md")
        #expect(dropboxTwice.user == "Alice")
        let syncthingOverDropbox = try #require(
            ConflictCopyName(parsing: "a (conflicted copy 2026-11-21).sync-conflict-20261122-101500-ABCDEFG.md"))
        #expect(syncthingOverDropbox.engine == .syncthing)
        #expect(syncthingOverDropbox.originalName == "a (conflicted copy 2026-11-21).md")
        let dropboxOverSyncthing = try #require(
            ConflictCopyName(parsing: "a.sync-conflict-20261122-101500-ABCDEFG (conflicted copy 2026-11-23).md"))
        #expect(dropboxOverSyncthing.engine == .dropbox)
        #expect(dropboxOverSyncthing.originalName == "a.sync-conflict-20261122-101500-ABCDEFG.md")
        let rcloneOverSyncthing = try #require(ConflictCopyName(parsing: "a.sync-conflict-20261122-101500-ABCDEFG.md.conflict2"))
        #expect(rcloneOverSyncthing.engine == .rclone)
        #expect(rcloneOverSyncthing.originalName == "a.sync-conflict-20261122-101500-ABCDEFG.md")
        // The inner copy parses in turn.
        #expect(ConflictCopyName(parsing: rcloneOverSyncthing.originalName)?.originalName == "a.md")
    }

    @Test func enginesAreSpelledAsStored() {
        #expect(ConflictCopyName.Engine.allCases.map(\.rawValue) == ["syncthing", "dropbox", "nextcloud", "owncloud-legacy", "rclone"])
    }

    // MARK: Temporary files

    @Test func syncthingTemporariesAreEngineTemporaries() {
        for name in [".syncthing.body.md.tmp", ".syncthing.trip.note.tmp", "~syncthing~body.md.tmp", ".syncthing.x.tmp"] {
            #expect(ConflictCopyName.isEngineTemporary(name), "\(name)")
        }
        for name in [
            "body.md", ".syncthing.", ".syncthing..tmp", "~syncthing~.tmp", ".syncthing.body.md", "syncthing.body.md.tmp",
            "body.md.tmp", ".stfolder", "body.sync-conflict-20261122-060329-OUKVBBE.md",
        ] {
            #expect(!ConflictCopyName.isEngineTemporary(name), "\(name)")
        }
    }

    // MARK: Round trip

    @Test func everyEngineNameParsesBackToItsOriginal() throws {
        var random = NameSplitMix64(seed: 0x5EED_C0FF_EE15_600D)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for _ in 0..<2_000 {
            let original = randomOriginalName(&random)
            // A whole second between 1970 and 2099.
            let date = Date(timeIntervalSince1970: TimeInterval(random.next(below: 4_102_444_800)))
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let ymd = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
            let isoDay = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
            let hms = String(format: "%02d%02d%02d", c.hour!, c.minute!, c.second!)
            let midnight = calendar.startOfDay(for: date)

            // Syncthing: Go's filepath.Ext, the last extension.
            let device = String((0..<7).map { _ in random.pick(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")) })
            let (goBase, goExt) = split(original, keepLeadingDot: false)
            if !goBase.isEmpty {
                let syncthing = try #require(ConflictCopyName(parsing: "\(goBase).sync-conflict-\(ymd)-\(hms)-\(device)\(goExt)"))
                #expect(syncthing.engine == .syncthing)
                #expect(syncthing.originalName == original)
                #expect(syncthing.date == date)
                #expect(syncthing.device == device)
            }

            // Nextcloud, ownCloud and Dropbox: the last extension, a leading dot being part of the name.
            let (base, ext) = split(original, keepLeadingDot: true)
            let user = randomWord(&random, from: "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 ._-éü日", length: 1...12)
                .trimmingCharacters(in: .whitespaces)
            let nextcloudUser = user.isEmpty ? nil : user
            let tag = nextcloudUser.map { "\($0) " } ?? ""
            let nextcloud = try #require(ConflictCopyName(parsing: "\(base) (conflicted copy \(tag)\(isoDay) \(hms))\(ext)"))
            #expect(nextcloud.engine == .nextcloud)
            #expect(nextcloud.originalName == original)
            #expect(nextcloud.date == date)
            #expect(nextcloud.user == nextcloudUser)

            let legacy = try #require(ConflictCopyName(parsing: "\(base)_conflict-\(ymd)-\(hms)\(ext)"))
            #expect(legacy.engine == .ownCloudLegacy)
            #expect(legacy.originalName == original)
            #expect(legacy.date == date)

            let dropboxUser = random.next(below: 3) == 0
                ? nil : randomWord(&random, from: "abcXYZ '’()0123456789é", length: 1...16, balanced: true)
            let apostrophe = random.next(below: 2) == 0 ? "'" : "’"
            let possessive = dropboxUser.map { "\($0)\(apostrophe)s " } ?? ""
            let dropbox = try #require(ConflictCopyName(parsing: "\(base) (\(possessive)conflicted copy \(isoDay))\(ext)"))
            #expect(dropbox.engine == .dropbox)
            #expect(dropbox.originalName == original)
            #expect(dropbox.date == midnight)
            #expect(dropbox.user == dropboxUser)

            // rclone: after the whole name.
            let n = Int(random.next(below: 1_000)) + 1
            let rclone = try #require(ConflictCopyName(parsing: "\(original).conflict\(n)"))
            #expect(rclone.engine == .rclone)
            #expect(rclone.originalName == original)
            #expect(rclone.number == n)
            #expect(rclone.date == nil)
            let path = Int(random.next(below: 2)) + 1
            let dots = random.next(below: 2) == 0 ? "." : ".."
            let rclonePath = try #require(ConflictCopyName(parsing: "\(original)\(dots)path\(path)"))
            #expect(rclonePath.originalName == original)
            #expect(rclonePath.number == path)
        }
    }
}

// MARK: - Helpers

/// NameSplitMix64: a small seeded generator, so that a failure can be replayed.
private struct NameSplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(below bound: UInt64) -> UInt64 { next() % bound }
    mutating func pick<T>(_ elements: [T]) -> T { elements[Int(next(below: UInt64(elements.count)))] }
}

/// A word of `length` characters from `alphabet`; with `balanced`, parentheses are paired.
private func randomWord(_ random: inout NameSplitMix64, from alphabet: String, length: ClosedRange<Int>, balanced: Bool = false) -> String {
    let characters = Array(alphabet)
    let count = length.lowerBound + Int(random.next(below: UInt64(length.count)))
    var word = ""
    var open = 0
    for _ in 0..<count {
        var c = random.pick(characters)
        if balanced, c == ")", open == 0 { c = "x" }
        if c == "(" { open += 1 }
        if c == ")" { open -= 1 }
        word.append(c)
    }
    if balanced { word += String(repeating: ")", count: open) }
    return word
}

/// A name of one to three dot-separated words and maybe an extension, sometimes hidden: "a b.c.md", ".x".
private func randomOriginalName(_ random: inout NameSplitMix64) -> String {
    let alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-+,'éü日本"
    let words = (0...Int(random.next(below: 3))).map { _ in randomWord(&random, from: alphabet, length: 1...10) }
    var name = words.joined(separator: ".")
    if random.next(below: 4) != 0 { name += "." + random.pick(["md", "json", "txt", "note", "gz", "QPH", "jpeg", "x"]) }
    if random.next(below: 8) == 0 { name = "." + name }
    return name
}

/// `name` split before its last dot. Without `keepLeadingDot` (Go's filepath.Ext), a leading dot
/// starts an extension too (".hidden" is "" + ".hidden"); with it (Nextcloud), it does not.
private func split(_ name: String, keepLeadingDot: Bool) -> (base: String, ext: String) {
    guard let dot = name.lastIndex(of: "."), !(keepLeadingDot && dot == name.startIndex) else { return (name, "") }
    return (String(name[..<dot]), String(name[dot...]))
}
