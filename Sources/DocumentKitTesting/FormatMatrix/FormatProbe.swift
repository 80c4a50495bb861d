import DocumentKit
import Foundation

/// How a ``FormatMatrix`` reaches the app it tests: open a document as the reader of a version
/// and say what happened, edit it and save, describe what a reader sees.
///
/// Make one for a `Document` subclass with ``document(manifestName:editedMembers:make:edit:view:)``,
/// or from closures that run your app in other processes (as the `notes` example's tests do).
public struct FormatProbe: Sendable {
    /// What opening a document did.
    public struct Observation: Sendable, CustomStringConvertible {
        /// How it opened.
        public var outcome: FormatMatrix.Outcome
        /// The message for people: why it was refused, why it is read-only, …
        public var message: String
        /// The manifest fields the reader reported it doesn't understand (a save must keep their
        /// values byte for byte).
        public var unrecognizedFields: [String]

        /// An observation.
        public init(outcome: FormatMatrix.Outcome, message: String, unrecognizedFields: [String] = []) {
            self.outcome = outcome
            self.message = message
            self.unrecognizedFields = unrecognizedFields
        }

        public var description: String { message.isEmpty ? "\(outcome)" : "\(outcome) (\(message))" }
    }

    /// The name of the manifest member of the format's packages.
    public var manifestName: String
    /// Opens the document at the URL as the reader of the version, without writing anything,
    /// and says what happened: a refusal is an observation, not an error. Throw only when the
    /// probe itself fails.
    public var open: @Sendable (URL, Int) async throws -> Observation
    /// Opens the document as the reader of the version, changes it and saves it. Throws if any
    /// of that is refused.
    public var edit: @Sendable (URL, Int) async throws -> Void
    /// What the reader of the version sees of the document, except what ``edit`` changes: equal
    /// texts mean the reader sees the same document.
    public var view: @Sendable (URL, Int) async throws -> String
    /// The members (paths relative to the package) that ``edit`` may change as the reader of the
    /// version, besides the manifest; every other member must keep its bytes.
    public var editedMembers: @Sendable (Int) -> Set<String>

    /// A probe from closures.
    public init(
        manifestName: String = "Info.json", open: @escaping @Sendable (URL, Int) async throws -> Observation,
        edit: @escaping @Sendable (URL, Int) async throws -> Void, view: @escaping @Sendable (URL, Int) async throws -> String,
        editedMembers: @escaping @Sendable (Int) -> Set<String>
    ) {
        self.manifestName = manifestName
        self.open = open
        self.edit = edit
        self.view = view
        self.editedMembers = editedMembers
    }

    /// A probe of a `Document` subclass in this process.
    ///
    /// ```swift
    /// let probe = FormatProbe.document(
    ///     editedMembers: { _ in ["body.md"] },
    ///     make: { url, version in NoteDocument(fileURL: url, readerVersion: version) },
    ///     edit: { note in note.body += "\nEdited." },
    ///     view: { note in "\(note.title) \(note.tags)" })
    /// ```
    ///
    /// - Parameters:
    ///   - make: A document for the URL, not opened yet, that reads and writes the version
    ///     (its ``Document/format`` describes that version).
    ///   - edit: A change to the content.
    ///   - view: What the reader sees of the content, except what `edit` changes.
    public static func document<Content: Sendable>(
        manifestName: String = "Info.json", editedMembers: @escaping @Sendable (Int) -> Set<String>,
        make: @escaping @Sendable (URL, Int) -> Document<Content>, edit: @escaping @Sendable (inout Content) -> Void,
        view: @escaping @Sendable (Content) -> String
    ) -> FormatProbe {
        FormatProbe(
            manifestName: manifestName,
            open: { url, version in
                let document = make(url, version)
                do throws(DocumentKitError) { try await document.open() } catch {
                    return Observation(outcome: .refused, message: error.description)
                }
                return observation(of: document, readerVersion: version)
            },
            edit: { url, version in
                let document = make(url, version)
                try await document.open()
                try document.update(edit)
                try await document.save()
            },
            view: { url, version in
                let document = make(url, version)
                try await document.open()
                return view(document.content)
            },
            editedMembers: editedMembers)
    }

    /// What an opened document's ``Document/formatStatus`` says.
    private static func observation<Content>(of document: Document<Content>, readerVersion: Int) -> Observation {
        guard let status = document.formatStatus else {
            return Observation(outcome: .readWrite, message: "The document has no format status (no format).")
        }
        switch status.compatibility {
        case .readWrite:
            return Observation(outcome: .readWrite, message: status.message)
        case .readWritePreservingUnknown(let unknown):
            return Observation(outcome: .readWritePreservingUnknown, message: status.message, unrecognizedFields: unknown.fields)
        case .readOnly(let message):
            return Observation(outcome: .readOnly, message: message)
        case .refused(let error):
            return Observation(outcome: .refused, message: error.description)
        case .needsMigration:
            return Observation(
                outcome: .migrated(to: document.manifest?.formatVersion ?? readerVersion), message: status.message)
        }
    }
}
