import DocumentKit
import Foundation

/// The note that `dk-coordination-child race` saves and ConcurrentVersionedSaveTests checks: a
/// package holding the body in `body.txt` and the manifest `Info.json` (so it has a document
/// identifier the version store knows it by).
public class RaceNoteDocument: Document<String>, @unchecked Sendable {
    static let raceFormat = FormatDescription(identifier: "org.documentkit.test.race-note", version: 1)

    public override var format: FormatDescription? { Self.raceFormat }

    public override func read(from fileWrapper: FileWrapper, manifest: DocumentManifest) throws -> String {
        guard let member = fileWrapper["body.txt"] else { throw CocoaError(.fileReadCorruptFile) }
        return String(decoding: try member.regularFileContents, as: UTF8.self)
    }

    public override func fileWrapper(
        for body: String, manifest: inout DocumentManifest, replacing previous: FileWrapper?
    ) throws -> FileWrapper {
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        tree["body.txt"] = FileWrapper(regularFileWithContents: Data(body.utf8))
        return tree
    }
}

/// The same note stored as one zip file (`Document.archiveFormat`): `dk-coordination-child race … zip`.
public final class RaceZipNoteDocument: RaceNoteDocument, @unchecked Sendable {
    public override var archiveFormat: ArchiveFormat? { .zip }
}
