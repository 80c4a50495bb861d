import DocumentKitSystem
import Foundation

/// A version's `record.json` in the store (see `Formats/version-store/v1/SPEC.md`).
struct VersionRecord: Codable, Sendable, Equatable {
    /// The record format's version; this code writes 1 and reads records up to 1.
    var version: Int = 1
    var id: String
    var documentIdentifier: String?
    /// `file` or `package`.
    var kind: String
    /// The item's name when the version was made.
    var name: String
    var origin: FileVersion.Origin
    var modified: String?
    var host: String?
    var user: String?
    var conflict: Bool
    var resolved: Bool
    var discardable: Bool
    var ancestor: String?
    var adoptedFrom: AdoptedFrom?
    var resolution: ResolutionRecord?

    /// The sync engine and copy names an adopted version came from.
    struct AdoptedFrom: Codable, Sendable, Equatable {
        var engine: String
        /// The copies' paths relative to the library, sorted.
        var names: [String]
        /// The devices the names carry (for Syncthing, the device whose version won), sorted.
        var devices: [String]?
    }

    /// How, when and where a conflict was resolved.
    struct ResolutionRecord: Codable, Sendable, Equatable {
        var how: FileVersion.Resolution
        var date: String
        var host: String?
    }

    static let currentVersion = 1
    static let fileName = "record.json"
    static let maximumSize = 64 * 1024

    /// The record's bytes: keys sorted, two-space indentation, one trailing newline: the same
    /// record always gives the same bytes (adoption on two machines must agree).
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and booleans cannot fail.
        var data = try! encoder.encode(self)  // swiftlint:disable:this force_try
        data.append(0x0A)
        return data
    }

    /// Reads a record, checking what the format requires.
    static func decode(_ data: Data, path: String) throws(DocumentKitError) -> VersionRecord {
        func malformed(_ detail: String) -> DocumentKitError {
            DocumentKitError(.corruptData, operation: .read, path: path, detail: detail)
        }
        guard data.count <= maximumSize else { throw malformed("The version record is larger than 64 KiB.") }
        let record: VersionRecord
        do { record = try JSONDecoder().decode(VersionRecord.self, from: data) } catch {
            throw malformed("The version record is not valid: \(SendableDescription(error))")
        }
        guard record.version <= currentVersion else {
            throw malformed("The version record is in record format \(record.version); this version of DocumentKit reads up to \(currentVersion).")
        }
        guard record.kind == "file" || record.kind == "package" else { throw malformed("Unknown kind “\(record.kind)”.") }
        guard VersionIdentifier.isValid(record.id) else { throw malformed("Invalid version id “\(record.id)”.") }
        return record
    }
}

/// Dates in records: ISO 8601 in UTC with milliseconds (`2026-11-22T10:15:00.123Z`), written and
/// read by hand (a formatter per record costs more than the rest of reading it).
enum RecordDate {
    private static var calendar: Calendar { utcCalendar }

    static func string(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let milliseconds = min(999, Int(((date.timeIntervalSince1970 - seconds) * 1000).rounded()))
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: seconds))
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2)).\(pad(milliseconds, 3))Z"
    }

    static func date(_ string: String?) -> Date? {
        guard let string else { return nil }
        let bytes = Array(string.utf8)
        // YYYY-MM-DDTHH:MM:SS[.fff]Z
        guard bytes.count == 20 || bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54,
            bytes[13] == 0x3A, bytes[16] == 0x3A, bytes.last == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard bytes[index] >= 0x30 && bytes[index] <= 0x39 else { return nil }
                value = value * 10 + Int(bytes[index] - 0x30)
            }
            return value
        }
        var components = DateComponents()
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var milliseconds = 0
        if bytes.count == 24 {
            guard bytes[19] == 0x2E, let value = number(20..<23) else { return nil }
            milliseconds = value
        }
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        guard let date = calendar.date(from: components) else { return nil }
        return date.addingTimeInterval(Double(milliseconds) / 1000)
    }
}
