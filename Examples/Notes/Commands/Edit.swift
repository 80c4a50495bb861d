import ArgumentParser
import DocumentKit
import Foundation

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace a note's body, add a line to it, change its tags, or edit its body in $EDITOR.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Option(help: "The new body (`-` reads standard input).") var set: String?
    @Option(help: "A line to add at the end (`-` reads standard input).") var append: String?
    @Option(name: .customLong("tag"), help: "Add a tag (repeat for more; format 2 and later).") var addedTags: [String] = []
    @Option(name: .customLong("untag"), help: "Remove a tag (repeat for more; format 2 and later).") var removedTags: [String] = []
    @Flag(
        help: """
            Edit the body in $EDITOR (else vi) and save it when the editor exits. Changes other processes make \
            meanwhile are reloaded into the editor's file while it is unchanged, else kept as a conflict version.
            """)
    var editor = false

    /// For the crash-recovery test: apply the edit without saving, autosave it elsewhere (a
    /// draft) after this many milliseconds of quiet, print `autosaved`, then wait to be killed.
    @Option(
        name: .customLong("autosave-elsewhere-after"),
        help: ArgumentHelp("Don't save: autosave a draft after MS milliseconds, print `autosaved`, then wait (for tests).", visibility: .hidden))
    var autosaveElsewhereAfter: Int?

    func validate() throws {
        if editor {
            guard set == nil && append == nil && addedTags.isEmpty && removedTags.isEmpty && autosaveElsewhereAfter == nil else {
                throw ValidationError("--editor goes alone: no --set, --append, --tag or --untag.")
            }
            return
        }
        guard set == nil || append == nil else { throw ValidationError("Give at most one of --set and --append.") }
        guard set != nil || append != nil || !addedTags.isEmpty || !removedTags.isEmpty else {
            throw ValidationError("Give --set, --append, --tag or --untag.")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try options.writableLibrary
            try checkTagsAreSupported(addedTags + removedTags, by: library)
            if editor {
                try await EditorSession(library: library, url: try await library.find(title).url, title: title).run()
                return
            }
            let body = set.map(text(from:))
            let line = append.map(text(from:))
            let (added, removed) = (addedTags, removedTags)
            let change: @Sendable (inout Note) -> Void = { note in
                if let body { note.body = body }
                if let line { note.appendLine(line) }
                for tag in added { note.addTag(tag) }
                note.tags.removeAll(where: removed.contains)
            }
            if let milliseconds = autosaveElsewhereAfter {
                try await Self.editWithoutSaving(try await library.find(title).document, milliseconds: milliseconds, change)
            }
            // Found without opening it: the edit's coordinated read is the only one.
            _ = try await library.edit(try await library.locate(title), title: title, change)
        }
    }
}

extension Edit {
    /// Applies `change` to the open `document` without saving it, lets autosave write a draft
    /// (autosaving elsewhere), says `autosaved`, then sleeps until the process is killed.
    static func editWithoutSaving(
        _ document: NoteDocument, milliseconds: Int, _ change: (inout Note) -> Void
    ) async throws -> Never {
        document.autosavePolicy = AutosavePolicy(quietPeriod: .milliseconds(milliseconds), autosavesInPlace: false)
        let events = document.events()
        try document.update(change)
        for await event in events {
            if case .saved(.autosaveElsewhere) = event { break }
            if case .saveFailed(.autosaveElsewhere, let error) = event { throw error }
        }
        FileHandle.standardOutput.write(Data("autosaved\n".utf8))
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
