import HTTPTypes
import Hummingbird

extension APIRoutes {
    /// `GET /api/openapi.json`: the API's OpenAPI document (``OpenAPIDocument``), from the binary.
    func addOpenAPIRoutes() {
        let document = ByteBuffer(string: OpenAPIDocument.json)
        add(.get, "/api/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-cache"],
                body: ResponseBody(byteBuffer: document))
        }
    }
}
