import DocumentKitSystem

/// The checks every entry name of an imported archive passes before anything is written: it
/// must be relative, stay inside the destination, and not look like a DocumentKit temporary item.
enum EntryPath {
    /// Why a name is refused (the message's sentence).
    struct Refusal: Error {
        let reason: String
        let isLimit: Bool
    }

    /// The components of `path` (`./` and repeated or trailing slashes dropped); empty for a
    /// name of the root itself (`./`, as `tar -C DIR .` writes first).
    static func components(of path: String, limits: ArchiveLimits) throws(Refusal) -> [String] {
        guard !path.hasPrefix("/") else {
            throw Refusal(reason: "Its name is an absolute path; an archive's names must stay inside the destination.", isLimit: false)
        }
        guard path.utf8.count <= limits.maximumPathBytes else {
            throw Refusal(reason: "Its name is \(path.utf8.count) bytes long, over the limit of \(limits.maximumPathBytes).", isLimit: true)
        }
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            guard part != ".." else {
                throw Refusal(reason: "Its name goes up a folder (“..”), out of the destination.", isLimit: false)
            }
            guard part.utf8.count <= 255 else {
                throw Refusal(reason: "A part of its name is longer than 255 bytes.", isLimit: false)
            }
            guard !isTemporaryName(part) else {
                throw Refusal(reason: "Its name looks like one of DocumentKit's temporary items (“\(part)”).", isLimit: false)
            }
            components.append(String(part))
        }
        guard !path.isEmpty else { throw Refusal(reason: "Its name is empty.", isLimit: false) }
        guard components.count <= limits.maximumDepth else {
            throw Refusal(reason: "It is \(components.count) folders deep, over the limit of \(limits.maximumDepth).", isLimit: true)
        }
        return components
    }

    /// Whether `name` is one of DocumentKit's temporary names (`.X.dk-...`).
    static func isTemporaryName(_ name: some StringProtocol) -> Bool {
        name.hasPrefix(".") && name.contains(TemporaryName.marker)
    }

    /// Whether the symbolic link at `components`, pointing to `target`, resolves inside the root
    /// when every link among `links` (paths joined by "/") is followed as the kernel would.
    static func linkStaysInside(_ components: [String], target: String, links: [String: String]) -> Bool {
        var stack = Array(components.dropLast())
        var pending = Array(target.split(separator: "/", omittingEmptySubsequences: true).map(String.init).reversed())
        guard !target.hasPrefix("/") else { return false }
        var hops = 0
        while let part = pending.popLast() {
            if part == "." { continue }
            if part == ".." {
                guard !stack.isEmpty else { return false }
                stack.removeLast()
                continue
            }
            stack.append(part)
            if let next = links[stack.joined(separator: "/")] {
                hops += 1
                guard hops <= 40, !next.hasPrefix("/") else { return false }
                stack.removeLast()
                pending.append(contentsOf: next.split(separator: "/", omittingEmptySubsequences: true).map(String.init).reversed())
            }
        }
        return true
    }
}
