import DocumentKitSystem
import Foundation

/// How a package's members compare with its manifest.
///
/// A package is complete when every member the manifest lists is there, a regular file with
/// the listed size and SHA-256. Members the manifest doesn't list (a sync engine's conflict
/// copies, the manifest itself) don't make it incomplete: they are only reported.
///
/// An incomplete package is one of two things, told apart by time (``isSettled(at:settlePeriod:)``):
/// a package a sync engine is still delivering (something in it changed within the settle
/// period: wait, and read it again), or a package another program edited or damaged without
/// writing its manifest, which has been left alone since (a settled mismatch: accept the
/// members on disk, or restore a version).
public struct PackageVerification: Hashable, Sendable {
    /// How long nothing in a package must have changed before members that don't match its
    /// manifest count as settled (edited by another program) rather than being delivered: 60 seconds.
    public static let defaultSettlePeriod: Duration = .seconds(60)

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
    /// The last change to anything in the package as read: the newest change time (`st_ctime`,
    /// which no program can set back) of its files and modification time of its folders (an entry
    /// added, removed or renamed). Nil when not known (a package made in memory).
    public var lastChange: Date?

    /// Makes a verification from its parts.
    public init(
        path: String, hasMemberList: Bool, listedCount: Int, matchingCount: Int, missingMembers: [String],
        mismatchedMembers: [String], unlistedMembers: [String], lastChange: Date? = nil
    ) {
        self.path = path
        self.hasMemberList = hasMemberList
        self.listedCount = listedCount
        self.matchingCount = matchingCount
        self.missingMembers = missingMembers
        self.mismatchedMembers = mismatchedMembers
        self.unlistedMembers = unlistedMembers
        self.lastChange = lastChange
    }

    /// Whether every listed member matches.
    public var isComplete: Bool { matchingCount == listedCount }

    /// Whether nothing in the package has changed for `settlePeriod` before `now`: an incomplete
    /// package is then settled (edited or damaged by another program), not being delivered. A
    /// package whose last change is unknown counts as settled.
    public func isSettled(at now: Date = Date(), settlePeriod: Duration = defaultSettlePeriod) -> Bool {
        guard let lastChange else { return true }
        return now.timeIntervalSince(lastChange) >= Self.seconds(settlePeriod)
    }

    /// Throws if the package is incomplete, saying which of the two cases it is.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the package, "3 of 5 members match", and which are
    ///   missing or different; with code `incompletePackage` while something in it changed within
    ///   `settlePeriod` before `now` (a sync may still be delivering it: wait, and read it again),
    ///   else `modifiedPackage` (its members were changed without its manifest and have settled:
    ///   accept them with `Document.acceptMembersOnDisk()`, or restore a version).
    public func checkComplete(at now: Date = Date(), settlePeriod: Duration = defaultSettlePeriod) throws(DocumentKitError) {
        guard !isComplete else { return }
        var parts = ["\(matchingCount) of \(listedCount) members match its manifest"]
        if !missingMembers.isEmpty { parts.append("missing: \(Self.list(missingMembers))") }
        if !mismatchedMembers.isEmpty { parts.append("different: \(Self.list(mismatchedMembers))") }
        let settle = Int(Self.seconds(settlePeriod).rounded(.up))
        if isSettled(at: now, settlePeriod: settlePeriod) {
            throw DocumentKitError(
                .modifiedPackage, operation: .open, path: path, originalIsIntact: true,
                detail: "Its members were changed without its manifest: \(parts.joined(separator: "; ")). Nothing in it has "
                    + "changed for \(settle) s, so this is no sync still delivering it but an edit by another program, or "
                    + "damage. Accept the members as they are now as the document's new state (the package as found is kept "
                    + "as a version), or restore a version.")
        }
        let age = lastChange.map { max(0, Int(now.timeIntervalSince($0))) }.map { " (it changed \($0) s ago)" } ?? ""
        throw DocumentKitError(
            .incompletePackage, operation: .open, path: path, originalIsIntact: true,
            detail: "The package is incomplete: \(parts.joined(separator: "; ")). A sync may still be delivering it\(age): "
                + "wait until nothing in it has changed for \(settle) s, and open it again.")
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The first ten names, quoted, and how many more.
    private static func list(_ names: [String]) -> String {
        let shown = names.prefix(10).map { "“\($0)”" }.joined(separator: ", ")
        return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
    }
}
