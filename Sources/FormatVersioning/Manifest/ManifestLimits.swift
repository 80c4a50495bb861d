extension DocumentManifest {
    /// The bounds every manifest keeps (`Formats/manifest/v1/SPEC.md`, "Limits"). A writer never
    /// exceeds them; a reader refuses a manifest that does, as malformed.
    public enum Limits {
        /// The largest manifest, in bytes: 8 MiB (about 55,000 members).
        public static let maximumSize = 8 << 20
        /// The deepest nesting of objects and arrays, the manifest object counting as 1.
        public static let maximumDepth = 64
        /// The most top-level fields the specification does not define.
        public static let maximumAdditionalFields = 1_024
        /// The longest key of an additional field, in UTF-8 bytes.
        public static let maximumKeyLength = 1_024
        /// The longest identifier, name, version text, feature or migration identifier, in UTF-8 bytes.
        public static let maximumNameLength = 255
        /// The most features in each of the two lists.
        public static let maximumFeatures = 1_024
        /// The most applied migrations.
        public static let maximumMigrations = 10_000
        /// The most members.
        public static let maximumMembers = 1_000_000
        /// The longest member path, in UTF-8 bytes.
        public static let maximumPathLength = 4_096
        /// The highest format version (versions start at 1).
        public static let maximumVersion = Int(Int32.max)
    }
}

/// The rules for single values, shared by reading and writing; each returns what is wrong with
/// a value, or nil.
enum ManifestRules {
    /// The JSON keys the specification defines at the top level.
    static let reservedKeys: Set = [
        "format", "formatVersion", "minReaderVersion", "minWriterVersion", "requiredFeatures", "optionalFeatures",
        "writer", "documentIdentifier", "members", "appliedMigrations",
    ]

    /// Reverse-DNS: two or more labels of ASCII letters, digits and `-`, joined by dots.
    static func formatIdentifierProblem(_ identifier: String) -> String? {
        let labels = identifier.split(separator: ".", omittingEmptySubsequences: false)
        let isLabel = { (label: Substring) in
            !label.isEmpty && label.utf8.allSatisfy { $0 == UInt8(ascii: "-") || ($0 < 0x80 && isAlphanumeric($0)) }
        }
        guard identifier.utf8.count <= DocumentManifest.Limits.maximumNameLength, labels.count >= 2,
            labels.allSatisfy(isLabel)
        else { return "is not a reverse-DNS identifier such as “org.example.format”" }
        return nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// A name: 1 to 255 UTF-8 bytes, no control characters.
    static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.utf8.count > DocumentManifest.Limits.maximumNameLength {
            return "is longer than \(DocumentManifest.Limits.maximumNameLength) bytes"
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "contains a control character"
        }
        return nil
    }

    static func versionProblem(_ version: Int) -> String? {
        (1...DocumentManifest.Limits.maximumVersion).contains(version)
            ? nil : "must be from 1 to \(DocumentManifest.Limits.maximumVersion)"
    }

    /// A relative path of plain names joined by `/`.
    static func memberPathProblem(_ path: String) -> String? {
        if path.utf8.count > DocumentManifest.Limits.maximumPathLength {
            return "is longer than \(DocumentManifest.Limits.maximumPathLength) bytes"
        }
        var path = path
        let plain = path.withUTF8 { bytes in
            // One pass over the bytes: each part between slashes is 1...255 bytes, not "." or
            // "..", without NUL.
            var start = 0
            for end in 0...bytes.count {
                guard end == bytes.count || bytes[end] == UInt8(ascii: "/") else {
                    if bytes[end] == 0 { return false }
                    continue
                }
                let length = end - start
                let dot = UInt8(ascii: ".")
                if length == 0 || length > 255 || (length == 1 && bytes[start] == dot)
                    || (length == 2 && bytes[start] == dot && bytes[start + 1] == dot)
                {
                    return false
                }
                start = end + 1
            }
            return true
        }
        return plain ? nil : "is not a relative path of plain names (no empty, “.” or “..” parts)"
    }

    /// Whether `byte` is one of `0-9a-f`.
    static func isLowerHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// 64 lower-case hexadecimal digits.
    static func digestProblem(_ digest: String) -> String? {
        let isHex = digest.utf8.allSatisfy(isLowerHexDigit)
        return digest.utf8.count == 64 && isHex ? nil : "must be 64 lower-case hexadecimal digits"
    }

    static func sizeProblem(_ size: Int64) -> String? {
        size >= 0 ? nil : "must not be negative"
    }

    static func additionalKeyProblem(_ key: String) -> String? {
        if reservedKeys.contains(key) { return "is a field the manifest defines" }
        return key.utf8.count > DocumentManifest.Limits.maximumKeyLength
            ? "is longer than \(DocumentManifest.Limits.maximumKeyLength) bytes" : nil
    }
}
