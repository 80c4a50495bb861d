extension OpenAPIDocument {
    /// `paths`, first part: the page, this document, the notes and their attachments.
    static let notePaths = #"""
      "paths": {
        "/": {
          "get": {
            "operationId": "webPage", "tags": ["page"], "summary": "The web page: the notes, live",
            "responses": {"200": {"description": "The page", "content": {"text/html": {"schema": {"type": "string"}}}}}
          }
        },
        "/api/openapi.json": {
          "get": {
            "operationId": "openAPIDocument", "tags": ["meta"], "summary": "This document",
            "responses": {"200": {"description": "The OpenAPI document", "content": {"application/json": {"schema": {"type": "object"}}}}}
          }
        },
        "/api/notes": {
          "get": {
            "operationId": "listNotes", "tags": ["notes"], "summary": "A page of the notes, in title order",
            "parameters": [
              {"name": "limit", "in": "query", "description": "The most notes on the page (100 when left out).",
                "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
              {"name": "cursor", "in": "query", "description": "Where the page starts: the `Next-Cursor` of the previous page (any other token is a 400).",
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"}}
            ],
            "responses": {
              "200": {
                "description": "The page; `Link` (`rel=\"next\"`) and `Next-Cursor` when more notes follow.",
                "headers": {
                  "Link": {"description": "`</api/notes?limit=N&cursor=C>; rel=\"next\"`",
                    "schema": {"type": "string", "pattern": "^</api/notes\\?limit=[0-9]+&cursor=[A-Za-z0-9_-]+>; rel=\"next\"$"}},
                  "Next-Cursor": {"description": "The `cursor` of the next page.", "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"}}
                },
                "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/NoteListItem"}}}},
                "links": {
                  "GetNote": {"operationId": "getNote", "parameters": {"path.id": "$response.body#/0/id"}},
                  "UpdateNote": {"operationId": "updateNote", "parameters": {"path.id": "$response.body#/0/id", "header.If-Match": "$response.body#/0/etag"}},
                  "PutAttachment": {"operationId": "putAttachment", "parameters": {"path.id": "$response.body#/0/id", "header.If-Match": "$response.body#/0/etag"}},
                  "ListVersions": {"operationId": "listVersions", "parameters": {"path.id": "$response.body#/0/id"}},
                  "ListConflicts": {"operationId": "listConflicts", "parameters": {"path.id": "$response.body#/0/id"}},
                  "ResolveConflicts": {"operationId": "resolveConflicts",
                    "parameters": {"path.id": "$response.body#/0/id", "header.If-Match": "$response.body#/0/etag"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          },
          "post": {
            "operationId": "createNote", "tags": ["notes"], "summary": "Create a note",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewNote"}}}},
            "responses": {
              "201": {
                "description": "Created: the note, its `ETag`, and its URL in `Location`.",
                "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Location": {"$ref": "#/components/headers/Location"}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                "links": {
                  "GetNote": {"operationId": "getNote", "parameters": {"path.id": "$response.body#/id"}},
                  "UpdateNote": {"operationId": "updateNote", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
                  "RenameNote": {"operationId": "renameNote", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
                  "DeleteNote": {"operationId": "deleteNote", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
                  "PutAttachment": {"operationId": "putAttachment", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
                  "ListVersions": {"operationId": "listVersions", "parameters": {"path.id": "$response.body#/id"}},
                  "ListConflicts": {"operationId": "listConflicts", "parameters": {"path.id": "$response.body#/id"}},
                  "ResolveConflicts": {"operationId": "resolveConflicts", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
                  "ExportNote": {"operationId": "exportNote", "parameters": {"path.id": "$response.body#/id"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "413": {"$ref": "#/components/responses/TooLarge"},
              "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
              "503": {"$ref": "#/components/responses/Busy"},
              "507": {"$ref": "#/components/responses/InsufficientStorage"}
            }
          }
        },
        "/api/notes/{id}": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}],
          "get": {
            "operationId": "getNote", "tags": ["notes"], "summary": "A note: its body, tags and attachments",
            "parameters": [{"$ref": "#/components/parameters/IfNoneMatch"}],
            "responses": {
              "200": {
                "description": "The note, its `ETag`, and `Conflicts` when it has unresolved conflict versions.",
                "headers": {
                  "ETag": {"$ref": "#/components/headers/ETag"},
                  "Conflicts": {"description": "How many unresolved conflict versions the note has (absent: none).", "schema": {"type": "integer", "minimum": 1}}
                },
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                "links": {
                  "UpdateNote": {"operationId": "updateNote", "parameters": {"path.id": "$request.path.id", "header.If-Match": "$response.header.ETag"}},
                  "RenameNote": {"operationId": "renameNote", "parameters": {"path.id": "$request.path.id", "header.If-Match": "$response.header.ETag"}},
                  "DeleteNote": {"operationId": "deleteNote", "parameters": {"path.id": "$request.path.id", "header.If-Match": "$response.header.ETag"}},
                  "PutAttachment": {"operationId": "putAttachment", "parameters": {"path.id": "$request.path.id", "header.If-Match": "$response.header.ETag"}}
                }
              },
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          },
          "put": {
            "operationId": "updateNote", "tags": ["notes"], "summary": "Change a note's body or tags (what is left out stays)",
            "parameters": [{"$ref": "#/components/parameters/IfMatch"}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NoteChange"}}}},
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
          },
          "delete": {
            "operationId": "deleteNote", "tags": ["notes"], "summary": "Delete a note (its last state is kept as a version)",
            "parameters": [{"$ref": "#/components/parameters/IfMatch"}],
            "responses": {
              "204": {"description": "Deleted"},
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
        "/api/notes/{id}/rename": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}],
          "post": {
            "operationId": "renameNote", "tags": ["notes"], "summary": "Give a note another title (its id stays)",
            "parameters": [{"$ref": "#/components/parameters/IfMatch"}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Rename"}}}},
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
        "/api/notes/{id}/attachments/{name}": {
          "parameters": [{"$ref": "#/components/parameters/NoteID"}, {"$ref": "#/components/parameters/AttachmentName"}],
          "get": {
            "operationId": "getAttachment", "tags": ["attachments"], "summary": "An attachment's bytes",
            "parameters": [{"$ref": "#/components/parameters/IfNoneMatch"}],
            "responses": {
              "200": {
                "description": "The bytes, with the attachment's media type and its own `ETag` (the SHA-256 of the bytes).",
                "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Content-Length": {"required": true, "schema": {"type": "integer", "minimum": 0}}},
                "content": {"*/*": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}}
              },
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          },
          "put": {
            "operationId": "putAttachment", "tags": ["attachments"], "summary": "Add or replace an attachment (the body is its bytes, streamed)",
            "parameters": [{"$ref": "#/components/parameters/IfMatch"}],
            "requestBody": {"description": "The attachment's bytes, whatever the `Content-Type` (its media type comes from its name); none: an empty attachment.",
              "content": {"application/octet-stream": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}}},
            "responses": {
              "200": {
                "description": "The note with the attachment, and the note's new `ETag`.",
                "headers": {"ETag": {"$ref": "#/components/headers/ETag"}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                "links": {
                  "GetAttachment": {"operationId": "getAttachment", "parameters": {"path.id": "$request.path.id", "path.name": "$request.path.name"}},
                  "DeleteAttachment": {"operationId": "deleteAttachment",
                    "parameters": {"path.id": "$request.path.id", "path.name": "$request.path.name", "header.If-Match": "$response.header.ETag"}},
                  "GetNote": {"operationId": "getNote", "parameters": {"path.id": "$request.path.id"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"},
              "409": {"$ref": "#/components/responses/Conflict"},
              "412": {"$ref": "#/components/responses/PreconditionFailed"},
              "413": {"$ref": "#/components/responses/TooLarge"},
              "428": {"$ref": "#/components/responses/PreconditionRequired"},
              "503": {"$ref": "#/components/responses/Busy"},
              "507": {"$ref": "#/components/responses/InsufficientStorage"}
            }
          },
          "delete": {
            "operationId": "deleteAttachment", "tags": ["attachments"], "summary": "Remove an attachment",
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
    """#
}
