/// The OpenAPI 3.1 document of the API, served at `GET /api/openapi.json`.
///
/// Written by hand, and this is the one copy: edit the JSON in this file and its
/// `OpenAPIDocument+*.swift` parts (no other file is generated from it or copied from it). It lives in
/// the binary, which never reads it from a file. The tests hold the router's route table, the responses
/// of a scripted session and a schemathesis run against it (`Tests/NotesTests/Server/ServerOpenAPITests.swift`).
enum OpenAPIDocument {
    /// The whole document: the parts in order.
    static let json = [head, notePaths, versionPaths, components].joined(separator: "\n") + "\n}\n"

    /// `openapi`, `info`, `tags`.
    static let head = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "notes serve",
        "version": "1.0.0",
        "description": "The HTTP API of `notes serve` over one notes library. A note's `ETag` is the SHA-256 of its stored bytes.",
        "x-writes": "Every write needs `If-Match` with the note's current `ETag` (or `*`): 428 without, 412 if the note changed since (nothing is written).",
        "x-retries": "A write sent again with the old tag after its response was lost succeeds if the note already is what it asks for.",
        "x-errors": "Every error is JSON: `{\"error\": {\"status\", \"code\", \"message\", \"etag\"?}}` (the Error schema).",
        "x-methods": "Every path answers a method it doesn't list with 405 and `Allow` (responses/MethodNotAllowed), and HEAD where it lists GET."
      },
      "tags": [
        {"name": "notes"}, {"name": "attachments"}, {"name": "versions"}, {"name": "export"}, {"name": "events"}, {"name": "meta"}, {"name": "page"}
      ],
    """#
}
