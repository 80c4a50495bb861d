import HTTPTypes
import Hummingbird

extension APIRoutes {
    /// `GET /`: the web page (``WebPage``), with a Content-Security-Policy that lets it run only
    /// its own inline style and script and talk only to this server.
    func addWebRoutes() {
        add(.get, "/") { _, _ in
            let headers: HTTPFields = [
                .contentType: "text/html; charset=utf-8",
                .cacheControl: "no-cache",
                .contentSecurityPolicy: WebPage.contentSecurityPolicy,
                .xContentTypeOptions: "nosniff",
                HTTPField.Name("Referrer-Policy")!: "no-referrer",
            ]
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: WebPage.html)))
        }
    }
}
