import DocumentKitSystem

/// How a package's members compare with its manifest.
///
/// A package is complete when every member the manifest lists is there, a regular file with
/// the listed size and SHA-256. Members the manifest doesn't list (a sync engine's conflict
/// copies, the manifest itself) don't make it incomplete: they are only reported.
public struct PackageVerification: Hashable, Sendable {
    /// The package's path.
    public var path: String
    /// Whether the manifest lists members at all (files written before they were recorded don't).
    public var hasMemberList: Bool
    /// How many members the manifest lists.
    public var listedCount: Int
    /// How many of them match.
    public var matchingCount: Int
    /// Listed members that are not in the package, sorted.
    public var missingMembers: [String]
    /// Listed members that are there with another size or contents, or are not regular files, sorted.
    public var mismatchedMembers: [String]
    /// Regular files in the package that the manifest doesn't list (the manifest excepted), sorted.
    public var unlistedMembers: [String]

    /// Whether every listed member matches.
    public var isComplete: Bool { matchingCount == listedCount }

    /// Throws if the package is incomplete.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `incompletePackage` naming the package: "3 of 5
    ///   members match", and which are missing or different.
    public func checkComplete() throws(DocumentKitError) {
        guard !isComplete else { return }
        var parts = ["\(matchingCount) of \(listedCount) members match its manifest"]
        if !missingMembers.isEmpty { parts.append("missing: \(Self.list(missingMembers))") }
        if !mismatchedMembers.isEmpty { parts.append("different: \(Self.list(mismatchedMembers))") }
        throw DocumentKitError(
            .incompletePackage, operation: .open, path: path, originalIsIntact: true,
            detail: "The package is incomplete: \(parts.joined(separator: "; ")). A sync may still be delivering it.")
    }

    /// The first ten names, quoted, and how many more.
    private static func list(_ names: [String]) -> String {
        let shown = names.prefix(10).map { "“\($0)”" }.joined(separator: ", ")
        return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
    }
}
