import DocumentKit
import Foundation

/// A single-file document of plain text: what `dk-coordination-child saves … file` saves and
/// SavesOfDifferentDocumentsTests checks.
public final class RaceTextDocument: Document<String>, @unchecked Sendable {
    public override func read(from fileWrapper: FileWrapper) throws -> String {
        String(decoding: try fileWrapper.regularFileContents, as: UTF8.self)
    }

    public override func fileWrapper(for text: String, replacing previous: FileWrapper?) throws -> FileWrapper {
        FileWrapper(regularFileWithContents: Data(text.utf8))
    }
}
