import DocumentKit
import Foundation

/// The migration steps of the notes format, registered in order by `NoteFormat.description(version:)`.
/// Never change one once shipped: notes record the steps applied to them.
enum NoteMigrations {
    /// `notes-2-tags-and-attachment-info`: an empty `tags` list, and `attachments.json` with the
    /// metadata of the attachments there are (their media type from their name; when they were
    /// added is not known).
    @Sendable static func addTagsAndAttachmentInfo(_ document: inout MigratingDocument) throws {
        if document.manifest.additionalFields["tags"] == nil {
            document.manifest.additionalFields["tags"] = try RawJSONValue(jsonText: "[]")
        }
        let attachments = document.fileWrapper[NoteFormat.attachmentsName]?.fileWrappers ?? [:]
        let names = attachments.filter(\.value.isRegularFile).keys
        guard !names.isEmpty, document.fileWrapper[NoteFormat.attachmentInfoName] == nil else { return }
        var info: [String: AttachmentInfo] = [:]
        for name in names { info[name] = AttachmentInfo(mediaType: AttachmentInfo.mediaType(of: name), added: nil) }
        document.fileWrapper[NoteFormat.attachmentInfoName] = FileWrapper(regularFileWithContents: try AttachmentInfo.encode(info))
    }

    /// `notes-3-body-as-blocks`: `body.md` becomes `body.json`, a list of blocks giving the same text.
    @Sendable static func storeBodyAsBlocks(_ document: inout MigratingDocument) throws {
        guard let member = document.fileWrapper[NoteFormat.bodyName], member.isRegularFile else {
            throw NoteFormat.Problem("the body \(NoteFormat.bodyName) is missing")
        }
        guard let text = String(validating: try member.regularFileContents, as: UTF8.self) else {
            throw NoteFormat.Problem("\(NoteFormat.bodyName) is not UTF-8 text")
        }
        document.fileWrapper[NoteFormat.blocksName] = FileWrapper(regularFileWithContents: try NoteBody(text: text).jsonData())
        document.fileWrapper[NoteFormat.bodyName] = nil
    }
}
