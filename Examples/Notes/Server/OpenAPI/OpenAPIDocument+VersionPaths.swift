extension OpenAPIDocument {
    /// `paths`, second part: versions, conflicts, export, events.
    static let versionPaths = #"""
        "/api/notes/{id}/versions": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}],
          "get": {
            "operationId": "listVersions", "tags": ["versions"], "summary": "A note's versions: the current one first, then the others newest first",
            "responses": {
              "200": {
                "description": "The versions",
                "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Version"}}}},
                "links": {
                  "GetVersion": {"operationId": "getVersion", "parameters": {"path.id": "$request.path.id", "path.version": "$response.body#/0/id"}},
                  "RestoreVersion": {"operationId": "restoreVersion",
                    "parameters": {"path.id": "$request.path.id", "path.version": "$response.body#/0/id", "header.If-Match": "$response.body#/0/etag"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          }
        },
        "/api/notes/{id}/versions/{version}": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}, {"$ref": "#/components/parameters/VersionID"}],
          "get": {
            "operationId": "getVersion", "tags": ["versions"], "summary": "A version of a note, as a note (`current`: the note itself)",
            "responses": {
              "200": {
                "description": "The note as it was in that version; `ETag`: the tag the note had then, when known.",
                "headers": {"ETag": {"$ref": "#/components/headers/OptionalETag"}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          }
        },
        "/api/notes/{id}/versions/{version}/restore": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}, {"$ref": "#/components/parameters/VersionID"}],
          "post": {
            "operationId": "restoreVersion", "tags": ["versions"], "summary": "Make a version's contents the note's again (the note as it was is kept as a version)",
            "parameters": [{"$ref": "#/components/parameters/IfMatch"}],
            "responses": {
              "200": {"$ref": "#/components/responses/Note"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "412": {"$ref": "#/components/responses/PreconditionFailed"},
              "428": {"$ref": "#/components/responses/PreconditionRequired"},
              "503": {"$ref": "#/components/responses/Busy"},
              "507": {"$ref": "#/components/responses/InsufficientStorage"}
            }
          }
        },
        "/api/notes/{id}/conflicts": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}],
          "get": {
            "operationId": "listConflicts", "tags": ["versions"], "summary": "A note's unresolved conflict versions",
            "responses": {
              "200": {"description": "The conflict versions", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Version"}}}}},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          }
        },
        "/api/notes/{id}/conflicts/resolve": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}],
          "post": {
            "operationId": "resolveConflicts", "tags": ["versions"], "summary": "Settle a note's conflict versions: keep the current note, keep a conflict version, or merge",
            "parameters": [{"$ref": "#/components/parameters/IfMatch"}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Resolve"}}}},
            "responses": {
              "200": {"$ref": "#/components/responses/Note"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "412": {"$ref": "#/components/responses/PreconditionFailed"},
              "413": {"$ref": "#/components/responses/TooLarge"},
              "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
              "428": {"$ref": "#/components/responses/PreconditionRequired"},
              "503": {"$ref": "#/components/responses/Busy"},
              "507": {"$ref": "#/components/responses/InsufficientStorage"}
            }
          }
        },
        "/api/notes/{id}/export": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}],
          "get": {
            "operationId": "exportNote", "tags": ["export"], "summary": "An archive of one note",
            "parameters": [{"$ref": "#/components/parameters/ArchiveFormat"}],
            "responses": {
              "200": {"$ref": "#/components/responses/Archive"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"},
              "507": {"$ref": "#/components/responses/InsufficientStorage"}
            }
          }
        },
        "/api/export": {
          "get": {
            "operationId": "exportLibrary", "tags": ["export"], "summary": "An archive of every note",
            "parameters": [{"$ref": "#/components/parameters/ArchiveFormat"}],
            "responses": {
              "200": {"$ref": "#/components/responses/Archive"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"},
              "507": {"$ref": "#/components/responses/InsufficientStorage"}
            }
          }
        },
        "/api/events": {
          "get": {
            "operationId": "events", "tags": ["events"], "summary": "The library's changes, as server-sent events",
            "description": "Each event is `created`, `changed` or `deleted`, its `data` an EventData, its `id` `EPOCH:SEQ`; `: hb` comments keep it open.",
        "x-resuming": "A client back with `Last-Event-ID` (or `?since=`) gets what it missed, or a `reset` event if that is no longer kept (list again).",
            "parameters": [
              {"name": "Last-Event-ID", "in": "header", "description": "The `id` of the last event the client got.", "schema": {"type": "string"}},
              {"name": "since", "in": "query", "description": "Like `Last-Event-ID`, for clients that can't set headers.", "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {
                "description": "The stream; it ends when the client goes away or the server stops.",
                "content": {"text/event-stream": {"schema": {"type": "string"}, "x-event-data": {"$ref": "#/components/schemas/EventData"}}}
              }
            }
          }
        }
      },
    """#
}
