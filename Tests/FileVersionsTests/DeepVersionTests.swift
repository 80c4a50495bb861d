import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A version is a private copy of the item: a hostile item nested deeper than any document may be
/// is refused with a clear error, not copied level by level without end (issue #12 §5).
@Suite struct DeepVersionTests {
    @Test("keeping a package nested deeper than FileWrapper.maximumDepth fails naming it, and leaves the store clean")
    func tooDeepIsRefused() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let package = library.item("deep.pkg")
        let nested = Array(repeating: "d", count: FileWrapper.maximumDepth + 5).joined(separator: "/")
        try FileManager.default.createDirectory(at: package.appendingPathComponent(nested), withIntermediateDirectories: true)
        #expect {
            try store.addVersion(ofItemAt: package)
        } throws: { error in
            let error = error as? DocumentKitError
            return error?.code == .corruptData && error?.path == package.path && error?.description.contains("deeper than") == true
        }
        let listing = try store.versions(ofItemAt: package)
        #expect(listing.others.isEmpty && listing.problems.isEmpty)
    }
}
