#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@testable import notes

/// The OpenAPI document of `notes serve` (`/api/openapi.json`, ``OpenAPIDocument``): it lists
/// exactly the router's routes, every response of a session through every route is as it says,
/// and schemathesis, fuzzing the live server from it, finds no 5xx and nothing that contradicts it.
@Suite("notes serve: the OpenAPI document")
struct ServerOpenAPITests {
    @Test func theDocumentIsOpenAPI31AndEveryReferenceAndLinkResolves() throws {
        let conformance = try OpenAPIConformance()
        let document = conformance.document
        #expect(document["openapi"]?.string == "3.1.0")
        var references: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let members):
                if let reference = members["$ref"]?.string { references.append(reference) }
                members.values.forEach(collect)
            case .array(let items): items.forEach(collect)
            default: break
            }
        }
        collect(document)
        #expect(references.count > 50)
        for reference in references { #expect(conformance.schemas.resolve(reference) != nil, "\(reference) names nothing") }

        let operations = document["paths"]?.members.values.flatMap { item in
            item.members.filter { OpenAPIConformance.methods.contains($0.key) }.map(\.value)
        } ?? []
        let ids = operations.compactMap { $0["operationId"]?.string }
        #expect(ids.count == operations.count && Set(ids).count == ids.count, "every operation has an operationId of its own: \(ids)")
        var links = 0
        for operation in operations {
            for response in operation["responses"]?.members.values.compactMap(conformance.dereferenced) ?? [] {
                for (name, link) in response["links"]?.members ?? [:] {
                    links += 1
                    #expect(ids.contains(link["operationId"]?.string ?? ""), "link \(name) names no operation")
                }
            }
        }
        #expect(links > 20, "the writes are linked from the responses that give a note's ETag")
    }

    @Test func theDocumentListsExactlyTheRoutesOfTheRouter() throws {
        let folder = try TemporaryDirectory(prefix: "notes-openapi")
        let namespace = folder.appending("coordination")
        try FileManager.default.createDirectory(at: namespace, withIntermediateDirectories: false)
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespace, packageExtensions: ["note"]))
        let library = NotesLibrary(url: folder.appending("Library"), coordinator: coordinator, persistentIndex: false)
        let server = NotesServer(api: NotesAPI(library: library, events: EventHub(), limits: ServerLimits()), host: "127.0.0.1", port: 0)
        let (_, routes) = server.makeRouter()
        let served = Set(routes.methods.flatMap { path, methods in methods.map { "\(String(describing: $0)) \(path)" } })
        let documented = try OpenAPIConformance().operations
        #expect(served.count > 15)
        #expect(served.subtracting(documented).isEmpty, "routes missing from the document: \(served.subtracting(documented).sorted())")
        #expect(documented.subtracting(served).isEmpty, "documented operations the router lacks: \(documented.subtracting(served).sorted())")
    }

    @Test func theSchemaCheckFindsWhatIsWrong() throws {
        let check = try OpenAPIConformance().schemas
        func problems(_ json: String, _ schema: String) throws -> [String] {
            check.problems(try JSONValue.parse(Data(json.utf8)), try JSONValue.parse(Data(schema.utf8)))
        }
        let note = ##"{"$ref": "#/components/schemas/Note"}"##
        #expect(try problems(#"{"id": "x"}"#, note).contains { $0.contains("misses") })
        #expect(try problems(#"[{"name": "a", "url": "/api/notes/x/attachments/a", "size": 1, "mediaType": "m", "etag": "", "more": 1}]"#,
            ##"{"type": "array", "items": {"$ref": "#/components/schemas/Attachment"}}"##).contains { $0.contains("undocumented") })
        #expect(try problems(#""abc""#, ##"{"$ref": "#/components/schemas/EntityTag"}"##).contains { $0.contains("does not match") })
        #expect(try problems("true", #"{"type": "integer"}"#).count == 1)
        #expect(try problems("1.5", #"{"type": "integer"}"#).count == 1)
        #expect(try problems("3", #"{"type": "integer", "minimum": 4}"#).count == 1)
        #expect(try problems(#""2026-13""#, #"{"type": "string", "format": "date-time"}"#).count == 1)
        #expect(try problems(#"{"keep": "a", "merge": true}"#, ##"{"$ref": "#/components/schemas/Resolve"}"##).count == 1)
        #expect(try problems("null", #"{"type": "string", "nope": 1}"#).contains { $0.contains("doesn't know") })
        #expect(try problems(#"{"keep": "current"}"#, ##"{"$ref": "#/components/schemas/Resolve"}"##).isEmpty)
        #expect(try problems(#"{"error": {"status": 404, "code": "c", "message": "m"}}"#, ##"{"$ref": "#/components/schemas/Error"}"##).isEmpty)
    }

    /// The statuses a session can't bring about: a lock held past the wait (503), a full disk
    /// (507), and the 409s of a damaged note, a note of a newer format or a read-only library.
    static let unprovoked: Set<String> = {
        let damaged = [
            "GET /api/notes/{id}", "PUT /api/notes/{id}", "DELETE /api/notes/{id}", "GET /api/notes/{id}/attachments/{name}",
            "PUT /api/notes/{id}/attachments/{name}", "DELETE /api/notes/{id}/attachments/{name}", "GET /api/notes/{id}/versions",
            "GET /api/notes/{id}/versions/{version}", "POST /api/notes/{id}/versions/{version}/restore", "GET /api/notes/{id}/conflicts",
            "GET /api/notes/{id}/export", "GET /api/export",
        ]
        return Set(damaged.map { $0 + " 409" })
    }()

    @Test func everyResponseOfASessionThroughEveryRouteIsAsTheDocumentSays() async throws {
        let limits = ["--max-body-bytes", "\(DocumentedSession.maxBodyBytes)", "--max-attachment-bytes", "\(DocumentedSession.maxAttachmentBytes)"]
        let served = try await ServedLibrary.start(arguments: limits) { notes in
            try notes.ok(["new", "Ideas", "--body", "some\n"])
            try notes.ok(["new", "Trip", "--body", "base\n"])
            try DocumentedSession.plantConflict(notes, in: try TemporaryDirectory(prefix: "notes-openapi-elsewhere"))
        }
        let conformance = try OpenAPIConformance()
        let session = DocumentedSession(served: served, conformance: conformance)
        try await session.page()
        try await session.conflicts()
        let (id, etag) = try await session.notes()
        let current = try await session.attachments(of: id, etag: etag)
        try await session.versions(of: id, etag: current)
        try await session.events()

        var expected: Set<String> = []
        for operation in conformance.operations {
            let (method, path) = (String(operation.split(separator: " ")[0]), String(operation.split(separator: " ")[1]))
            for status in conformance.statuses(method, path) where !["503", "507"].contains(status) {
                expected.insert("\(operation) \(status)")
            }
        }
        let missed = expected.subtracting(conformance.covered).subtracting(Self.unprovoked)
        #expect(missed.isEmpty, "documented responses the session never got: \(missed.sorted())")
        #expect(try await served.server.terminate() == 0)
    }

    @Test func schemathesisFindsNoServerErrorAndNoResponseThatContradictsTheDocument() async throws {
        let served = try await ServedLibrary.start { notes in
            for title in ["Ideas", "Trip", "Groceries"] { try notes.ok(["new", title, "--body", "\(title) begins\n", "--tag", "seed"]) }
            try DocumentedSession.plantConflict(notes, in: try TemporaryDirectory(prefix: "notes-openapi-elsewhere"))
        }
        let run = try await SchemathesisRun.run(schema: served.server.baseURL + "/api/openapi.json")
        #expect(run.status == 0, "schemathesis failed (exit \(run.status)):\n\(run.report)")
        // Every operation was tested but the event stream and the document itself (which schemathesis
        // leaves out when it reads the document from the server), and requests were sent.
        let operations = try OpenAPIConformance().operations.count
        #expect(run.output.contains("Selected: \(operations - 2)/\(operations - 1)"), "\(run.report)")
        #expect(run.output.contains("Tested: \(operations - 2)"), "not every operation was tested:\n\(run.report)")
        #expect(run.output.range(of: #"[0-9]{3,} generated, [0-9]{3,} passed"#, options: .regularExpression) != nil, "\(run.report)")
        let errors = served.server.stderr.withLock { $0 }
        #expect(try await served.server.terminate() == 0, "the server after the run: \(errors.suffix(2000))")
    }
}
