import HTTPTypes
import Hummingbird

/// The server's routes, registered through one table: what it lists is what the router serves
/// (the OpenAPI document's test checks the table against the spec), and every path answers an
/// unknown method with 405 and `Allow`.
final class APIRoutes: @unchecked Sendable {
    // @unchecked: built on one task before the server starts, read-only after.
    typealias Handler = @Sendable (Request, BasicRequestContext) async throws -> Response

    let router: Router<BasicRequestContext>
    /// The methods of every path, in OpenAPI form (`/api/notes/{id}`).
    private(set) var methods: [String: [HTTPRequest.Method]] = [:]

    init(router: Router<BasicRequestContext>) { self.router = router }

    /// Serves `method` at `path` (OpenAPI form: `{name}` parameters).
    func add(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler) {
        methods[path, default: []].append(method)
        router.on(RouterPath(Self.routerPath(path)), method: method, use: handler)
    }

    /// 405 with `Allow` for the other methods of every path: call it after the last ``add(_:_:_:)``.
    func addMethodNotAllowed() {
        let all: [HTTPRequest.Method] = [.get, .put, .post, .delete, .patch, .options, .trace, HTTPRequest.Method("QUERY")!]
        for (path, served) in methods {
            var allowed = served
            if served.contains(.get) { allowed.append(.head) }
            let allow = allowed.map(\.rawValue).joined(separator: ", ")
            for method in all where !served.contains(method) {
                router.on(RouterPath(Self.routerPath(path)), method: method) { request, _ -> Response in
                    var error = APIError(
                        .methodNotAllowed, "methodNotAllowed", "\(request.method.rawValue) is not allowed on \(path); allowed: \(allow)")
                    error.headers[.allow] = allow
                    throw error
                }
            }
        }
    }

    /// `/api/notes/{id}` → `/api/notes/:id`.
    static func routerPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? ":" + part.dropFirst().dropLast() : part
        }.joined(separator: "/")
    }
}
