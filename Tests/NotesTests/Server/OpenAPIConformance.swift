import Foundation
import Synchronization
import Testing

@testable import notes

/// The OpenAPI document (``OpenAPIDocument``) as the tests read it, and a check of a response
/// against what it documents for an operation: the status, the media type, the required headers
/// and each documented header's value, the JSON body against its schema, no body where none is
/// documented. It records which (operation, status) pairs it saw.
final class OpenAPIConformance: Sendable {
    let document: JSONValue
    let schemas: SchemaCheck
    private let seen = Mutex<Set<String>>([])

    init() throws {
        document = try JSONValue.parse(Data(OpenAPIDocument.json.utf8))
        schemas = SchemaCheck(document: document)
    }

    /// Every (path, method) of the document, methods upper-case: `GET /api/notes/{id}`.
    var operations: Set<String> {
        Set(document["paths"]?.members.flatMap { path, item in item.members.keys.filter(Self.methods.contains).map { "\($0.uppercased()) \(path)" } } ?? [])
    }

    static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "options", "head", "trace"]

    /// `value`, or what its `$ref` names.
    func dereferenced(_ value: JSONValue?) -> JSONValue? {
        guard let reference = value?["$ref"]?.string else { return value }
        return dereferenced(schemas.resolve(reference))
    }

    /// The operation object of `method` `path` (`path` in OpenAPI form).
    func operation(_ method: String, _ path: String) -> JSONValue? { document["paths"]?[path]?[method.lowercased()] }

    /// The (operation, status) pairs checked so far: `PUT /api/notes/{id} 412`.
    var covered: Set<String> { seen.withLock { $0 } }

    /// The statuses the document gives `method` `path`.
    func statuses(_ method: String, _ path: String) -> Set<String> { Set(operation(method, path)?["responses"]?.members.keys.map { $0 } ?? []) }

    /// What is wrong with `reply` as a response of `method` `path` (empty: it is as documented).
    func problems(of reply: NotesServerProcess.Reply, _ method: String, _ path: String) -> [String] {
        let status = "\(reply.status)"
        let response: JSONValue?
        if reply.status == 405 {
            // Not an operation's: every path answers methods it doesn't list so.
            response = dereferenced(document["components"]?["responses"]?["MethodNotAllowed"])
        } else {
            guard let operation = operation(method, path) else { return ["\(method) \(path) is not in the document"] }
            response = dereferenced(operation["responses"]?[status])
        }
        seen.withLock { _ = $0.insert("\(method) \(path) \(status)") }
        guard let response else { return ["\(method) \(path): \(status) is not documented (\(statuses(method, path).sorted()))"] }
        var found: [String] = []
        for (name, header) in response["headers"]?.members ?? [:] {
            let header = dereferenced(header)
            let value = reply.header(name)
            if value == nil, header?["required"] == .bool(true) { found.append("\(status): the required header \(name) is missing") }
            guard let value, let schema = header?["schema"] else { continue }
            let json: JSONValue = Int(value).map { .number(Double($0)) } ?? .string(value)
            found += schemas.problems(json, schema, at: "header \(name)")
        }
        found += bodyProblems(of: reply, response: response)
        return found.map { "\(method) \(path) \(status): \($0)" }
    }

    private func bodyProblems(of reply: NotesServerProcess.Reply, response: JSONValue) -> [String] {
        guard let content = response["content"]?.members, !content.isEmpty else {
            return reply.body.isEmpty ? [] : ["a body where none is documented: \(reply.text.prefix(200))"]
        }
        let mediaType = reply.header("Content-Type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let media = content[mediaType] ?? content["*/*"] else {
            return ["Content-Type \(mediaType) is not one of \(content.keys.sorted())"]
        }
        guard mediaType == "application/json", let schema = media["schema"] else { return [] }
        guard let body = try? JSONValue.parse(reply.body) else { return ["the body is not JSON: \(reply.text.prefix(200))"] }
        return schemas.problems(body, schema, at: "body")
    }

    /// Expects `reply` to be as documented for `method` `path`.
    func expect(
        _ reply: NotesServerProcess.Reply, _ method: String, _ path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for problem in problems(of: reply, method, path) { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
    }
}
