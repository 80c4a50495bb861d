import Foundation

/// Version ids: `YYYYMMDDTHHMMSSZ-HHHHHHHHHHHHHHHH`, the time the version's contents were
/// modified (UTC, to the second) and 16 lower-case hexadecimal digits: random, or taken from a
/// digest of the contents, so that the same contents kept on two machines get the same id.
enum VersionIdentifier {
    static func make(date: Date, digest: String?) -> String {
        let hex: String
        if let digest, digest.count >= 16 {
            hex = String(digest.prefix(16))
        } else {
            // One 64-bit draw, its 16 hexadecimal digits (leading zeros kept).
            let drawn = String(UInt64.random(in: .min ... .max), radix: 16)
            hex = String(repeating: "0", count: 16 - drawn.count) + drawn
        }
        return timestamp(date) + "-" + hex
    }

    static func timestamp(_ date: Date) -> String {
        let c = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return String(format: "%04d", c.year ?? 1970) + two(c.month) + two(c.day) + "T" + two(c.hour) + two(c.minute) + two(c.second) + "Z"
    }

    /// The date an id holds (to the second), or nil for a name that is not an id. Plain
    /// arithmetic (days from the civil date): each save's pruning reads the date of every version.
    static func date(of id: String) -> Date? {
        guard isValid(id) else { return nil }
        var digits: [Int] = []
        digits.reserveCapacity(14)
        for (index, byte) in id.utf8.enumerated() where index < 15 && index != 8 { digits.append(Int(byte) - 48) }
        func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + digits[$1] } }
        let (year, month, day) = (number(0..<4), number(4..<6), number(6..<8))
        let (hour, minute, second) = (number(8..<10), number(10..<12), number(12..<14))
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// The ids among `names` that name the newest second of them (an id starts with its date,
    /// `YYYYMMDDTHHMMSSZ`): where the newest version is, without reading the others.
    static func ofNewestSecond(among names: [String]) -> [String] {
        let ids = names.filter(isValid)
        guard let newest = ids.map({ $0.prefix(16) }).max() else { return [] }
        return ids.filter { $0.prefix(16) == newest }
    }

    /// The length of an id in bytes.
    static let length = 33

    /// Whether `id` has the form above (so that it is safe as a folder name).
    /// (A check of the name's bytes in place: a listing of a folder of thousands of versions
    /// checks every name.)
    static func isValid(_ id: String) -> Bool {
        guard id.utf8.count == length else { return false }
        // Through the bytes' buffer (a native string has one): several times faster than the view.
        return id.utf8.withContiguousStorageIfAvailable(isValid) ?? Array(id.utf8).withUnsafeBufferPointer(isValid)
    }

    /// ``isValid(_:)`` of a name's bytes.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == length else { return false }
        for index in 0..<length {
            let byte = bytes[index]
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let valid: Bool = switch index {
            case 8: byte == UInt8(ascii: "T")
            case 15: byte == UInt8(ascii: "Z")
            case 16: byte == UInt8(ascii: "-")
            case ..<16: isDigit
            default: isDigit || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            }
            guard valid else { return false }
        }
        return true
    }
}
