/// Version 2 request packets, `A <kind> <save 0|1> <unit> <item unit> <path>`, written and read
/// byte by byte: they are on the path of every coordination that asks another process.
extension PresenterRequest {
    /// The packet.
    var encodedVersion2: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count + 64)
        bytes.append(UInt8(ascii: "A"))
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: kind.rawValue.utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(save ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: " "))
        Self.appendDecimal(unit, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        Self.appendDecimal(itemUnit, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: path.utf8)
        return bytes
    }

    /// Parses a packet; nil if it is not a well-formed version 2 request.
    init?(version2 packet: UnsafeRawBufferPointer) {
        var fields = packet[...]
        func field() -> Slice<UnsafeRawBufferPointer>? {
            guard let space = fields.firstIndex(of: UInt8(ascii: " ")) else { return nil }
            defer { fields = fields[(space + 1)...] }
            return fields[..<space]
        }
        guard let tag = field(), tag.elementsEqual("A".utf8),
            let kindField = field(), let kind = Self.kind(kindField),
            let saveField = field(), saveField.count == 1, saveField.first! == UInt8(ascii: "0") || saveField.first! == UInt8(ascii: "1"),
            let unitField = field(), let unit = Self.decimal(unitField),
            let itemField = field(), let itemUnit = Self.decimal(itemField)
        else { return nil }
        self.init(
            kind: kind, save: saveField.first! == UInt8(ascii: "1"), unit: unit, itemUnit: itemUnit,
            path: String(decoding: fields, as: UTF8.self))
    }

    /// Every kind, for reading one.
    private static let kinds: [Kind] = [.reader, .writer, .deletion, .subitemDeletion]

    /// The kind named by `bytes`.
    private static func kind(_ bytes: Slice<UnsafeRawBufferPointer>) -> Kind? {
        kinds.first { $0.rawValue.utf8.elementsEqual(bytes) }
    }

    /// An optionally negative decimal without leading `+`, as `String(Int64)` writes it.
    private static func decimal(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int64? {
        var digits = bytes
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            magnitude = magnitude * 10 + UInt64(byte - UInt8(ascii: "0"))
        }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// Appends `value` in decimal, as `String(Int64)` writes it.
    private static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }
}
