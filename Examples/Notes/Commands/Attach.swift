import ArgumentParser
import DocumentKit
import Foundation

struct Attach: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Copy files into a note as attachments.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Argument(help: "The files to attach.") var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one file to attach.") }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try options.writableLibrary
            let entry = (url: try await library.locate(title), ())
            var added: [String: FileWrapper] = [:]
            for file in files {
                let url = URL(fileURLWithPath: file)
                let wrapper: FileWrapper
                do throws(DocumentKitError) { wrapper = try FileWrapper(contentsOf: url) } catch {
                    throw NotesError(NotesError(error, note: file).status, "\(file): \(error)")
                }
                guard wrapper.isRegularFile else { throw NotesError(.badData, "\(file): only regular files can be attached") }
                added[url.lastPathComponent] = wrapper
            }
            let attachments = added
            let now = Date()
            let note = try await library.edit(entry.url, title: title) { note in
                for (name, wrapper) in attachments {
                    note.attachments[name] = wrapper
                    note.attachmentInfo[name] = AttachmentInfo(attaching: name, at: now)  // kept from format 2 on
                }
            }
            print("Attached \(added.keys.sorted().joined(separator: ", ")) to “\(note.title)”")
        }
    }
}
