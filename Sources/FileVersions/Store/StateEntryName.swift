import DocumentKitSystem
import Foundation

/// The names of state entries (format 3): `ID.state-YYYYMMDDTHHMMSSmmmZ-RRRRRRRR`, the version's
/// id, the UTC time the state was written (to the millisecond) and 8 random `[0-9a-z]`. Names
/// of one version sort oldest first: the last is the version's state.
enum StateEntryName {
    static let infix = ".state-"
    /// The length of the part after ``infix``.
    static let suffixLength = 28

    static func make(for id: String, date: Date = Date()) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        let stamp = VersionIdentifier.timestamp(date).dropLast() + String(format: "%03d", milliseconds) + "Z"
        return id + infix + stamp + "-" + String(TemporaryName.randomSuffix().prefix(8))
    }

    /// The time in a state entry's name, to the millisecond; nil for any other name.
    static func date(of name: String) -> Date? {
        guard let (_, suffix) = parse(name) else { return nil }
        let digits = suffix.utf8.prefix(18).filter { $0 != UInt8(ascii: "T") }.map { Int($0) - 48 }
        let milliseconds = digits[14] * 100 + digits[15] * 10 + digits[16]
        let id = String(suffix.prefix(15)) + "Z-0000000000000000"
        return VersionIdentifier.date(of: id).map { $0.addingTimeInterval(Double(milliseconds) / 1000) }
    }

    /// Whether `name` has a state entry's length and ``infix`` where a state entry has it: a
    /// test of a few bytes, for a scan of a listing (``parse(_:)`` says whether it is one).
    static func mayBe(_ name: String) -> Bool {
        let bytes = name.utf8
        guard bytes.count == VersionIdentifier.length + infix.utf8.count + suffixLength else { return false }
        return bytes.dropFirst(VersionIdentifier.length).starts(with: infix.utf8)
    }

    /// The version id `name` is a state entry of, and the name's suffix (what orders the states
    /// of one version); nil for any other name.
    static func parse(_ name: String) -> (id: String, suffix: Substring)? {
        guard mayBe(name) else { return nil }
        let id = String(name.prefix(VersionIdentifier.length))
        guard VersionIdentifier.isValid(id) else { return nil }
        let suffix = name.suffix(suffixLength)
        for (index, byte) in suffix.utf8.enumerated() {
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let isLower = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            let valid: Bool = switch index {
            case 8: byte == UInt8(ascii: "T")
            case 18: byte == UInt8(ascii: "Z")
            case 19: byte == UInt8(ascii: "-")
            case 20...: isDigit || isLower
            default: isDigit
            }
            guard valid else { return nil }
        }
        return (id, suffix)
    }
}
