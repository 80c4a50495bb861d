import Foundation

/// A note's entity tag (`ETag`): the SHA-256 of its manifest, which records the size and SHA-256
/// of every member, so it names the note's stored bytes. Strong, quoted, 64 hex digits; the same
/// digest ends the id of every version the store keeps of that state (`…-<first 16 digits>`).
struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// The digest, without quotes.
    let digest: String

    /// The header value: the digest in quotes.
    var description: String { "\"\(digest)\"" }

    /// What an `If-Match` or `If-None-Match` header asks for.
    enum Condition: Equatable, Sendable {
        /// `*`: any current state.
        case any
        /// A list of tags; `weak` are those sent as `W/"…"` (they never match strongly).
        case tags(strong: [EntityTag], weak: [EntityTag])

        /// RFC 9110's strong comparison (`If-Match`): `*` matches any existing state.
        func matchesStrongly(_ tag: EntityTag?) -> Bool {
            guard let tag else { return false }
            switch self {
            case .any: return true
            case .tags(let strong, _): return strong.contains(tag)
            }
        }

        /// RFC 9110's weak comparison (`If-None-Match`): `W/"x"` matches `"x"`.
        func matchesWeakly(_ tag: EntityTag?) -> Bool {
            guard let tag else { return false }
            switch self {
            case .any: return true
            case .tags(let strong, let weak): return strong.contains(tag) || weak.contains(tag)
            }
        }
    }

    /// Parses an `If-Match` / `If-None-Match` value: `*`, or a comma-separated list of
    /// `"tag"` and `W/"tag"`. Nil for anything else (the request is then a 400).
    static func parseCondition(_ value: String) -> Condition? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return .any }
        var strong: [EntityTag] = []
        var weak: [EntityTag] = []
        var rest = Substring(trimmed)
        while !rest.isEmpty {
            var isWeak = false
            if rest.hasPrefix("W/") {
                isWeak = true
                rest = rest.dropFirst(2)
            }
            guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else { return nil }
            let opaque = rest[rest.index(after: rest.startIndex)..<end]
            // RFC 9110 etagc: %x21 / %x23-7E / obs-text; no quotes, no controls, no spaces.
            guard opaque.unicodeScalars.allSatisfy({ $0.value == 0x21 || (0x23...0x7E).contains($0.value) || $0.value >= 0x80 })
            else { return nil }
            let tag = EntityTag(digest: String(opaque))
            if isWeak { weak.append(tag) } else { strong.append(tag) }
            rest = rest[rest.index(after: end)...].drop(while: { $0 == " " || $0 == "\t" })
            if rest.isEmpty { break }
            guard rest.first == "," else { return nil }
            rest = rest.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
            if rest.isEmpty { return nil }
        }
        guard !strong.isEmpty || !weak.isEmpty else { return nil }
        return .tags(strong: strong, weak: weak)
    }
}
