#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation
import HTTPTypes

/// An attachment opened for reading: its descriptor holds the state it was opened in, so the
/// bytes sent are those its tag names even if the note is saved meanwhile.
struct OpenAttachment: Sendable {
    let descriptor: Int32
    let size: Int64
    let tag: EntityTag
    let mediaType: String
}

extension NotesAPI {
    /// A name that can be an attachment's: one file name inside the note, not hidden (the
    /// server's and DocumentKit's temporary names are), without control characters.
    static func checkAttachmentName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 255 else { throw APIError.badRequest("an attachment name must be 1 to 255 bytes") }
        guard !name.contains("/"), name != ".", name != "..", !name.hasPrefix(".") else {
            throw APIError.badRequest("“\(name)” would not stay a file of the note: an attachment name has no `/` and doesn't start with `.`")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw APIError.badRequest("an attachment name must not contain control characters")
        }
    }

    static func noSuchAttachment(_ name: String, of id: String) -> APIError {
        APIError(.notFound, "noSuchAttachment", "note \(id) has no attachment “\(name)”")
    }

    /// Opens the attachment `name` of the note `id` under a coordinated read: its record in the
    /// manifest gives its tag, and the file must have the recorded size.
    func openAttachment(_ name: String, of id: String) async throws -> OpenAttachment {
        try Self.checkAttachmentName(name)
        let url = try await locate(id)
        return try await library.coordinator.coordinate(with: [.readingIntent(with: url)]) { granted in
            let place = granted[0].url
            guard let manifest = NotesLibrary.manifest(ofPackageAt: place),
                UUID(uuidString: manifest.documentIdentifier)?.uuidString == UUID(uuidString: id)?.uuidString
            else { throw APIError.noSuchNote(id) }
            guard let record = manifest.members?[NoteFormat.attachmentsName + "/" + name] else { throw Self.noSuchAttachment(name, of: id) }
            let path = place.appendingPathComponent(NoteFormat.attachmentsName).appendingPathComponent(name).path
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.noSuchAttachment(name, of: id) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) == record.size else {
                close(descriptor)
                throw APIError(
                    .conflict, "modifiedPackage",
                    "the attachment “\(name)” of note \(id) is not the file its manifest records (another program changed it)")
            }
            let infoMember = place.appendingPathComponent(NoteFormat.attachmentInfoName)
            let info2 = RegularFile.contents(of: infoMember).flatMap { try? AttachmentInfo.decode($0) }?[name]
            return OpenAttachment(
                descriptor: descriptor, size: record.size, tag: EntityTag(digest: record.sha256),
                mediaType: info2?.mediaType ?? AttachmentInfo.mediaType(of: name))
        }
    }

    /// Adds or replaces the attachment `name` with the file at `upload` (a hidden file in the
    /// library folder, written and synced by the caller), under a coordinated write checked
    /// against `condition`.
    func putAttachment(_ name: String, of id: String, condition: EntityTag.Condition, from upload: URL) async throws -> (NoteResource, EntityTag?) {
        let wrapper: FileWrapper
        do throws(DocumentKitError) { wrapper = try FileWrapper(contentsOf: upload) } catch { throw NotesError(error, note: id) }
        let now = Date()
        let result = try await write(id) { place, document, current in
            guard let document else { preconditionFailure("an opening write opens the note") }
            _ = try Self.check(condition, current: current, id: id)
            do throws(DocumentKitError) {
                try document.update { note in
                    note.attachments[name] = wrapper
                    note.attachmentInfo[name] = AttachmentInfo(attaching: name, at: now)
                }
                try await document.close()
            } catch {
                throw NotesError(error, note: document.content.title)
            }
            let new = tag(at: place)
            return (resource(of: document, at: place, tag: new), new)
        }
        await events.publish(.changed, note: result.0)
        return result
    }

    /// Removes the attachment `name`.
    func deleteAttachment(_ name: String, of id: String, condition: EntityTag.Condition) async throws -> (NoteResource, EntityTag?) {
        try Self.checkAttachmentName(name)
        let result = try await write(id) { place, document, current in
            guard let document else { preconditionFailure("an opening write opens the note") }
            guard document.content.attachments[name] != nil else { throw Self.noSuchAttachment(name, of: id) }
            _ = try Self.check(condition, current: current, id: id)
            do throws(DocumentKitError) {
                try document.update { note in
                    note.attachments[name] = nil
                    note.attachmentInfo[name] = nil
                }
                try await document.close()
            } catch {
                throw NotesError(error, note: document.content.title)
            }
            let new = tag(at: place)
            return (resource(of: document, at: place, tag: new), new)
        }
        await events.publish(.changed, note: result.0)
        return result
    }

    /// A new hidden file in the library folder for an upload (same file system as the notes:
    /// the save links it into the note instead of copying it), opened for writing.
    func makeUploadFile() throws -> (URL, Int32) {
        let url = library.url.appendingPathComponent(".notes-upload-\(UUID().uuidString)")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw NotesError(
                code == ENOSPC ? .ioError : .ioError,
                "can't store the upload in \(library.url.path): \(String(cString: strerror(code)))\(code == ENOSPC ? " (No space left on device)" : "")")
        }
        return (url, descriptor)
    }
}
