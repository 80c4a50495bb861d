// TEMPORARY: stands in for APIs arriving in main; removed once main has them.
import DocumentKit
import Foundation

extension VersionStore {
    func adoptConflictCopies(in folder: URL) throws(DocumentKitError) -> [FileVersion] { [] }
}

extension Document {
    var versionStore: VersionStore? {
        get { nil }
        set { _ = newValue }
    }
}
