import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

extension APIRoutes {
    /// `GET /api/events`: the library's changes as server-sent events.
    ///
    /// The stream starts with `retry:` and an `id:` priming the client's cursor; a client that
    /// reconnects with `Last-Event-ID` (or `?since=`) gets the events it missed, or a `reset`
    /// event when they are no longer kept (it should list again). Comments (`: hb`) keep the
    /// connection open while nothing happens. The stream ends when the client goes away or the
    /// server shuts down.
    func addEventRoutes(_ api: NotesAPI) {
        add(.get, "/api/events") { request, _ in
            let cursor = request.headers[.lastEventID] ?? request.uri.queryParameters.get("since").map { String($0) }
            let hub = api.events
            let headers: HTTPFields = [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store, no-transform", .accelBuffering: "no",
            ]
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                let (token, start, stream) = await hub.subscribe(after: cursor)
                var prelude = "retry: 2000\n"
                let position = await hub.position
                switch start {
                case .reset:
                    prelude += "event: reset\nid: \(position)\ndata: {\"reason\":\"the events after your Last-Event-ID are no longer kept: list the notes again\"}\n\n"
                case .replay(let missed):
                    if missed.isEmpty { prelude += "id: \(cursor.flatMap { $0.isEmpty ? nil : $0 } ?? position)\n: ready\n\n" }
                    for event in missed { prelude += Self.frame(event, hub: hub) }
                }
                try await writer.write(ByteBuffer(string: prelude))
                let replayed: UInt64 = if case .replay(let missed) = start { missed.last?.sequence ?? 0 } else { 0 }
                try await withGracefulShutdownHandler {
                    try await request.body.consumeWithInboundCloseHandler { _ in
                        for await message in stream {
                            switch message {
                            case .heartbeat: try await writer.write(ByteBuffer(string: ": hb\n\n"))
                            case .event(let event) where event.sequence > replayed:
                                try await writer.write(ByteBuffer(string: Self.frame(event, hub: hub)))
                            case .event: continue
                            }
                        }
                    } onInboundClosed: {
                        Task { await hub.unsubscribe(token) }
                    }
                } onGracefulShutdown: {
                    Task { await hub.unsubscribe(token) }
                }
                await hub.unsubscribe(token)
                try await writer.finish(nil)
            })
        }
    }

    /// One event as the stream sends it.
    static func frame(_ event: EventHub.Event, hub: EventHub) -> String {
        let data = (try? JSONCoding.encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "event: \(event.kind.rawValue)\nid: \(hub.identifier(of: event))\ndata: \(data)\n\n"
    }
}
