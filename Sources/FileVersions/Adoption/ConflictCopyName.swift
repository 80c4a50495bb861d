import Foundation

/// A name a sync engine gave to a conflict copy of an item, parsed.
///
/// Works on a single path component and touches no file system. A conflict copy of a conflict
/// copy parses to the outer copy, the marker nearest the end of the name: its
/// ``originalName`` then still holds the inner marker
/// (`"a (conflicted copy 2026-11-21) (conflicted copy 2026-11-22).md"` is a copy of
/// `"a (conflicted copy 2026-11-21).md"`).
public struct ConflictCopyName: Sendable, Hashable {
    /// The sync engine whose naming scheme the name follows.
    public enum Engine: String, Sendable, Hashable, CaseIterable, Codable {
        /// `<base>.sync-conflict-YYYYMMDD-HHMMSS-<DEVICE><.ext>`.
        case syncthing
        /// `<base> (<user>'s conflicted copy YYYY-MM-DD)<.ext>`, the user being optional.
        case dropbox
        /// `<base> (conflicted copy [<user> ]YYYY-MM-DD HHMMSS)<.ext>`: Nextcloud, and ownCloud 2.5 and later.
        case nextcloud
        /// `<base>_conflict-YYYYMMDD-HHMMSS<.ext>`: ownCloud before 2.5.
        case ownCloudLegacy = "owncloud-legacy"
        /// rclone bisync: `<name>.conflictN`, `<name>.path1`, `<name>.path2` (before 1.66: `<name>..path1`).
        case rclone
    }

    /// The engine whose scheme the name follows.
    public let engine: Engine
    /// The copy's own name, as found.
    public let copyName: String
    /// The name of the item it is a conflict copy of ("body.md", "trip.note", "notes.txt").
    public let originalName: String
    /// When the engine made the copy, from the name, read as UTC (nil when the name has no time: rclone).
    /// Dropbox has a date only (midnight UTC).
    public let date: Date?
    /// The device named (Syncthing's 7-character short device id), if any.
    public let device: String?
    /// The user or computer named (Dropbox's "Alice's conflicted copy"), if any.
    public let user: String?
    /// rclone's number N in `.conflictN` (or 1/2 for `.path1`/`.path2`), if any.
    public let number: Int?

    /// Parses `name` (a single path component); nil when it is not a conflict copy name.
    ///
    /// Nil as well for a name containing `/`, an empty original name or one that is `.` or `..`
    /// (`....path1`), an invalid date or time (month 13, 30 February, 24:00), and near misses such
    /// as `notes.conflict`, `x.conflict0` or `a.path3`.
    ///
    /// A name that parses is only *shaped* like a copy: whether an item is one depends on its
    /// folder too (see ``init(parsing:isFolder:engines:originalIsFolder:)``).
    public init?(parsing name: String) {
        guard !name.isEmpty, !name.utf8.contains(Self.slash) else { return nil }
        let bytes = Array(name.utf8)
        // Every scheme anchors its marker towards the end of the name; when several match
        // (a copy of a copy), the marker that starts last is the outer one.
        let candidates = [
            Self.parseRclone(bytes),
            Self.parseSyncthing(bytes),
            Self.parseOwnCloudLegacy(bytes),
            Self.parseParenthesized(bytes),
        ].compactMap { $0 }
        // `.` and `..` name the folder and its parent, never an original (`....path1`, `..sync-conflict-…`).
        guard let best = candidates.max(by: { $0.markerStart < $1.markerStart }), best.originalName != ".", best.originalName != ".."
        else { return nil }
        engine = best.engine
        copyName = name
        originalName = best.originalName
        date = best.date
        device = best.device
        user = best.user
        number = best.number
    }

    /// Whether `name` is a temporary file of a sync engine that must never be read as a document or member:
    /// Syncthing's `.syncthing.*.tmp` and `~syncthing~*.tmp`.
    public static func isEngineTemporary(_ name: String) -> Bool {
        for prefix in [".syncthing.", "~syncthing~"]
        where name.hasPrefix(prefix) && name.hasSuffix(".tmp") && name.utf8.count > prefix.utf8.count + 4 {
            return true
        }
        return false
    }
}

// MARK: - Parsing

extension ConflictCopyName {
    /// One scheme's reading of a name.
    private struct Candidate {
        var engine: Engine
        var markerStart: Int
        var originalName: String
        var date: Date?
        var device: String?
        var user: String?
        var number: Int?
    }

    private static let slash = UInt8(ascii: "/")
    private static let dot = UInt8(ascii: ".")
    private static let dash = UInt8(ascii: "-")
    private static let space = UInt8(ascii: " ")
    private static let openParen = UInt8(ascii: "(")
    private static let closeParen = UInt8(ascii: ")")

    private static let syncthingMarker = Array(".sync-conflict-".utf8)
    private static let ownCloudLegacyMarker = Array("_conflict-".utf8)
    private static let rcloneConflict = Array(".conflict".utf8)
    private static let conflictedCopy = Array("conflicted copy ".utf8)
    private static let dropboxPossessives = [Array("'s ".utf8), Array("\u{2019}s ".utf8)]

    /// UTC Gregorian, for dates built from components.
    private static var utc: Calendar { utcCalendar }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// `.conflictN` (N ≥ 1, no leading zero), `.path1`/`.path2`, `..path1`/`..path2`.
    private static func parseRclone(_ b: [UInt8]) -> Candidate? {
        var digitsStart = b.endIndex
        while digitsStart > b.startIndex, isDigit(b[digitsStart - 1]) { digitsStart -= 1 }
        let digits = b[digitsStart...]
        guard !digits.isEmpty, digits.first != UInt8(ascii: "0"), let n = Int(string(digits)), n >= 1 else { return nil }
        let head = b[..<digitsStart]
        if head.count > rcloneConflict.count, head.suffix(rcloneConflict.count).elementsEqual(rcloneConflict) {
            let markerStart = digitsStart - rcloneConflict.count
            return Candidate(engine: .rclone, markerStart: markerStart, originalName: string(b[..<markerStart]), number: n)
        }
        let path = Array(".path".utf8)
        guard n == 1 || n == 2, digits.count == 1, head.count > path.count, head.suffix(path.count).elementsEqual(path) else {
            return nil
        }
        var markerStart = digitsStart - path.count
        if b[markerStart - 1] == dot { markerStart -= 1 }  // before rclone 1.66: `name..path1`
        guard markerStart > 0 else { return nil }
        return Candidate(engine: .rclone, markerStart: markerStart, originalName: string(b[..<markerStart]), number: n)
    }

    /// `<base>.sync-conflict-YYYYMMDD-HHMMSS-<DEVICE><.ext>`; ext has no dot but its first.
    private static func parseSyncthing(_ b: [UInt8]) -> Candidate? {
        guard let markerStart = lastRange(of: syncthingMarker, in: b), markerStart > 0 else { return nil }
        var i = markerStart + syncthingMarker.count
        guard let date = compactDateTime(b, at: i) else { return nil }
        i += 15
        guard i < b.count, b[i] == dash else { return nil }
        i += 1
        let deviceLength = 7
        guard i + deviceLength <= b.count, b[i..<(i + deviceLength)].allSatisfy(isBase32) else { return nil }
        let device = string(b[i..<(i + deviceLength)])
        i += deviceLength
        let ext = b[i...]
        guard ext.isEmpty || (ext.first == dot && !ext.dropFirst().contains(dot)) else { return nil }
        return Candidate(
            engine: .syncthing, markerStart: markerStart, originalName: string(b[..<markerStart]) + string(ext),
            date: date, device: device)
    }

    /// `<base>_conflict-YYYYMMDD-HHMMSS<.ext>`; ext has no dot but its first.
    private static func parseOwnCloudLegacy(_ b: [UInt8]) -> Candidate? {
        guard let markerStart = lastRange(of: ownCloudLegacyMarker, in: b), markerStart > 0 else { return nil }
        let i = markerStart + ownCloudLegacyMarker.count
        guard let date = compactDateTime(b, at: i) else { return nil }
        let ext = b[(i + 15)...]
        guard ext.isEmpty || (ext.first == dot && !ext.dropFirst().contains(dot)) else { return nil }
        return Candidate(
            engine: .ownCloudLegacy, markerStart: markerStart, originalName: string(b[..<markerStart]) + string(ext),
            date: date)
    }

    /// Dropbox and Nextcloud: `<base> (<tag>)<.ext>`, trying each `)` followed by the end or a dot,
    /// last first.
    private static func parseParenthesized(_ b: [UInt8]) -> Candidate? {
        var close = b.count - 1
        while close > 0 {
            defer { close -= 1 }
            guard b[close] == closeParen, close + 1 == b.count || b[close + 1] == dot else { continue }
            // The matching `(`, so that a user such as "Bob (work)" stays whole.
            var depth = 0
            var open = close - 1
            while open >= 0 {
                if b[open] == closeParen {
                    depth += 1
                } else if b[open] == openParen {
                    if depth == 0 { break }
                    depth -= 1
                }
                open -= 1
            }
            guard open >= 2, b[open - 1] == space else { continue }
            let tag = b[(open + 1)..<close]
            guard let reading = parseDropboxTag(tag) ?? parseNextcloudTag(tag) else { continue }
            return Candidate(
                engine: reading.engine, markerStart: open - 1,
                originalName: string(b[..<(open - 1)]) + string(b[(close + 1)...]),
                date: reading.date, user: reading.user)
        }
        return nil
    }

    /// `[<user>'s ]conflicted copy YYYY-MM-DD` (or ’s).
    private static func parseDropboxTag(_ tag: ArraySlice<UInt8>) -> (engine: Engine, date: Date, user: String?)? {
        let dateLength = 10
        guard tag.count >= conflictedCopy.count + dateLength else { return nil }
        let dateStart = tag.endIndex - dateLength
        guard let date = isoDate(tag[dateStart...])?.date else { return nil }
        let markerStart = dateStart - conflictedCopy.count
        guard tag[markerStart..<dateStart].elementsEqual(conflictedCopy) else { return nil }
        if markerStart == tag.startIndex { return (.dropbox, date, nil) }
        for possessive in dropboxPossessives {
            let userEnd = markerStart - possessive.count
            guard userEnd > tag.startIndex, tag[userEnd..<markerStart].elementsEqual(possessive) else { continue }
            return (.dropbox, date, string(tag[..<userEnd]))
        }
        return nil
    }

    /// `conflicted copy [<user> ]YYYY-MM-DD HHMMSS`.
    private static func parseNextcloudTag(_ tag: ArraySlice<UInt8>) -> (engine: Engine, date: Date, user: String?)? {
        let dateTimeLength = 17  // YYYY-MM-DD HHMMSS
        guard tag.count >= conflictedCopy.count + dateTimeLength,
            tag.prefix(conflictedCopy.count).elementsEqual(conflictedCopy)
        else { return nil }
        let dateStart = tag.endIndex - dateTimeLength
        let timeStart = dateStart + 11
        guard tag[timeStart - 1] == space,
            let day = isoDate(tag[dateStart..<(timeStart - 1)]),
            let time = number(tag[timeStart..<tag.endIndex]),
            let date = makeDate(day.year, day.month, day.day, time / 10_000, time / 100 % 100, time % 100)
        else { return nil }
        let userStart = tag.startIndex + conflictedCopy.count
        if userStart == dateStart { return (.nextcloud, date, nil) }
        guard dateStart - userStart >= 2, tag[dateStart - 1] == space else { return nil }
        return (.nextcloud, date, string(tag[userStart..<(dateStart - 1)]))
    }

    // MARK: Dates

    /// `YYYYMMDD-HHMMSS` at `i`.
    private static func compactDateTime(_ b: [UInt8], at i: Int) -> Date? {
        guard i + 15 <= b.count, b[i + 8] == dash,
            let day = number(b[i..<(i + 8)]), let time = number(b[(i + 9)..<(i + 15)])
        else { return nil }
        return makeDate(day / 10_000, day / 100 % 100, day % 100, time / 10_000, time / 100 % 100, time % 100)
    }

    /// `YYYY-MM-DD`: its date and components.
    private static func isoDate(_ s: ArraySlice<UInt8>) -> (date: Date, year: Int, month: Int, day: Int)? {
        guard s.count == 10 else { return nil }
        let i = s.startIndex
        guard s[i + 4] == dash, s[i + 7] == dash,
            let year = number(s[i..<(i + 4)]), let month = number(s[(i + 5)..<(i + 7)]), let day = number(s[(i + 8)..<(i + 10)]),
            let date = makeDate(year, month, day, 0, 0, 0)
        else { return nil }
        return (date, year, month, day)
    }

    /// The UTC date, or nil when a component is out of range (30 February included).
    private static func makeDate(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Date? {
        guard year >= 1, (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...days[month - 1]).contains(day) else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return utc.date(from: components)
    }

    /// The decimal value of `s`, all ASCII digits, or nil.
    private static func number(_ s: ArraySlice<UInt8>) -> Int? {
        guard !s.isEmpty, s.count <= 18, s.allSatisfy(isDigit) else { return nil }
        return s.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    /// RFC 4648 base32: A–Z and 2–7.
    private static func isBase32(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "2") && c <= UInt8(ascii: "7"))
    }

    /// Where the last occurrence of `needle` starts in `b`.
    private static func lastRange(of needle: [UInt8], in b: [UInt8]) -> Int? {
        guard b.count >= needle.count else { return nil }
        var i = b.count - needle.count
        while i >= 0 {
            if b[i] == needle[0], b[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i -= 1
        }
        return nil
    }
}
