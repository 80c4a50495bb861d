import DocumentArchive
import DocumentKitSystem
import FilePackages
import FormatVersioning
import Foundation

extension DocumentArchiver {
    /// Checks a staged package against its manifest `manifestName`: every member it lists is
    /// there with its size and SHA-256. A package without that manifest (or a file) passes: it
    /// has nothing to check against. Use it as the `verify` step of an import.
    ///
    /// - Throws: `corruptData` naming the archive, the package and the members that don't
    ///   match (an archive is not being synced: a mismatch is damage, never a sync in progress),
    ///   or the manifest's own error.
    public static func verifyManifest(of item: StagedItem, manifestName: String, archiveURL: URL) throws(DocumentKitError) {
        guard item.isFolder else { return }
        let manifestURL = item.url.appendingPathComponent(manifestName)
        guard FileManager.default.fileExists(atPath: manifestURL.path) else { return }
        let archivePath = archiveURL.standardizedFileURL.path
        func damaged(_ error: DocumentKitError) -> DocumentKitError {
            var result = DocumentKitError(
                .corruptData, operation: .read, path: archivePath, step: "checking “\(item.name)” against its manifest",
                detail: error.detail ?? "\(error)")
            result.archiveEntry = item.name
            return result
        }
        do throws(DocumentKitError) {
            let tree = try FileWrapper(contentsOf: item.url)
            let manifest = try DocumentManifest(package: tree, manifestName: manifestName, packagePath: item.url.path)
            var hasher = MemberHasher()
            let verification = try hasher.verify(tree, against: manifest, manifestName: manifestName, packagePath: item.url.path)
            guard verification.isComplete else {
                var parts = ["\(verification.matchingCount) of \(verification.listedCount) members match its manifest"]
                if !verification.missingMembers.isEmpty { parts.append("missing: \(verification.missingMembers.joined(separator: ", "))") }
                if !verification.mismatchedMembers.isEmpty {
                    parts.append("different: \(verification.mismatchedMembers.joined(separator: ", "))")
                }
                var error = DocumentKitError(
                    .corruptData, operation: .read, path: archivePath, step: "checking “\(item.name)” against its manifest",
                    detail: "The archive's copy is damaged: \(parts.joined(separator: "; ")).")
                error.archiveEntry = item.name + "/" + (verification.missingMembers + verification.mismatchedMembers).first!
                throw error
            }
        } catch {
            if error.path == archivePath { throw error }
            throw damaged(error)
        }
    }
}
