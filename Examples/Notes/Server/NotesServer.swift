import DocumentKit
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import UnixSignals

/// `notes serve`'s HTTP server over one library: the JSON API under `/api`, the change feed,
/// the OpenAPI document and the web page, on Hummingbird 2.
///
/// SIGTERM or SIGINT: the server stops accepting, the event streams end, requests in flight
/// finish (each write is acknowledged only once saved), then the library's index is closed, the
/// versions the last saves kept are complete, and the process exits 0.
struct NotesServer {
    let api: NotesAPI
    let host: String
    let port: Int
    /// How often the event streams get a heartbeat comment.
    var heartbeat: Duration = .seconds(15)
    /// At most this many connections are open at once (the rest wait in the listen backlog):
    /// the server's descriptors stay bounded whatever the load.
    var maximumConnections = 512
    /// A folder whose files are served as they are at `/bench/NAME` (`docbench serve`'s floor).
    var staticFolder: String?

    /// The router with every route.
    func makeRouter() -> (Router<BasicRequestContext>, APIRoutes) {
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: APIErrorMiddleware())
        if let staticFolder { router.add(middleware: FileMiddleware(staticFolder, urlBasePath: "/bench")) }
        let routes = APIRoutes(router: router)
        routes.addNoteRoutes(api)
        routes.addAttachmentRoutes(api)
        routes.addVersionRoutes(api)
        routes.addOpenAPIRoutes()
        routes.addWebRoutes()
        routes.addEventRoutes(api)
        routes.addMethodNotAllowed()
        return (router, routes)
    }

    /// Serves until SIGTERM or SIGINT; `ready` is called with the port once it listens.
    func run(ready: @escaping @Sendable (Int) -> Void) async throws {
        var logger = Logger(label: "notes.serve")
        logger.logLevel = ProcessInfo.processInfo.environment["NOTES_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let (router, _) = makeRouter()
        let app = Application(
            router: router,
            configuration: .init(
                address: .hostname(host, port: port), serverName: "notes",
                availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections)),
            services: [LibraryWatcher(api: api, heartbeat: heartbeat), MemoryTrimmer(interval: .seconds(5))],
            onServerRunning: { channel in ready(channel.localAddress?.port ?? port) },
            logger: logger)
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(20)
        configuration.maximumCancellationDuration = .seconds(5)
        do { try await ServiceGroup(configuration: configuration).run() } catch {
            await finish()
            throw error
        }
        await finish()
    }

    /// After the last request: the index closed, and the versions the last saves kept (still
    /// being completed) complete, before the process ends.
    private func finish() async {
        api.savedNotes.removeAll()
        await api.library.index?.close()
        let store = api.library.store
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                store.waitForPendingVersions()
                done.resume()
            }
        }
    }
}
