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
            throw malformed("The version record is in store format \(record.version); this version of DocumentKit reads up to \(currentVersion).")
        }
        guard record.kind == "file" || record.kind == "package" else { throw malformed("Unknown kind “\(record.kind)”.") }
        guard VersionIdentifier.isValid(record.id) else { throw malformed("Invalid version id “\(record.id)”.") }
        return record
    }
}

/// Dates in records: ISO 8601 in UTC with milliseconds (`2026-11-22T10:15:00.123Z`).
enum RecordDate {
    static func string(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    static func date(_ string: String?) -> Date? {
        guard let string else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: string) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: string)
    }
}
