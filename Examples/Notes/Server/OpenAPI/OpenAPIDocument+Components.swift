extension OpenAPIDocument {
    /// `components`: parameters, headers, responses, schemas.
    static let components = #"""
      "components": {
        "parameters": {
          "NoteID": {"name": "id", "in": "path", "required": true, "description": "The note's id: its document identifier, a UUID (stable across renames).",
            "schema": {"type": "string", "format": "uuid"}},
          "AttachmentName": {"name": "name", "in": "path", "required": true,
            "description": "The attachment's file name, percent-encoded: 1 to 255 bytes of UTF-8, no `/`, not starting with `.`, no control characters.",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[^./\\x00-\\x1F\\x7F][^/\\x00-\\x1F\\x7F]*$"}},
          "VersionID": {"name": "version", "in": "path", "required": true, "description": "A version's id, as the versions list gives it, or `current`.",
            "schema": {"type": "string", "minLength": 1}},
          "IfMatch": {"name": "If-Match", "in": "header", "required": true,
            "description": "The note's current `ETag` (or `*`): a write of a note that changed since is refused with 412. Without it: 428.",
            "schema": {"$ref": "#/components/schemas/EntityTagCondition"}},
          "IfNoneMatch": {"name": "If-None-Match", "in": "header",
            "description": "An `ETag` the client has: 304 if it is still the current one (weak comparison: `W/` tags match too).",
            "schema": {"$ref": "#/components/schemas/EntityTagCondition"}},
          "ArchiveFormat": {"name": "format", "in": "query", "description": "The archive's format (`zip` when left out).",
            "schema": {"type": "string", "enum": ["zip", "tar.gz", "tar.zst", "tar.xz"]}}
        },
        "headers": {
          "ETag": {"required": true, "description": "The strong entity tag of what the response names: the SHA-256 of its stored bytes, quoted.",
            "schema": {"$ref": "#/components/schemas/EntityTag"}},
          "OptionalETag": {"description": "The strong entity tag, when it is known.", "schema": {"$ref": "#/components/schemas/EntityTag"}},
          "Location": {"required": true, "description": "The new note's URL.", "schema": {"type": "string", "pattern": "^/api/notes/[^/]+$"}}
        },
        "responses": {
          "Note": {
            "description": "The note as it is now, and its new `ETag`.",
            "headers": {"ETag": {"$ref": "#/components/headers/ETag"}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
            "links": {
              "GetNote": {"operationId": "getNote", "parameters": {"path.id": "$response.body#/id"}},
              "UpdateNote": {"operationId": "updateNote", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
              "DeleteNote": {"operationId": "deleteNote", "parameters": {"path.id": "$response.body#/id", "header.If-Match": "$response.header.ETag"}},
              "ListVersions": {"operationId": "listVersions", "parameters": {"path.id": "$response.body#/id"}}
            }
          },
          "NotModified": {"description": "Not modified: the `ETag` sent in `If-None-Match` is the current one. No body.",
            "headers": {"ETag": {"$ref": "#/components/headers/ETag"}}},
          "Archive": {
            "description": "The archive, streamed, with `Content-Disposition: attachment`.",
            "headers": {"Content-Disposition": {"required": true, "schema": {"type": "string", "pattern": "^attachment; filename=\"[^\"/]+\"$"}}},
            "content": {
              "application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}},
              "application/gzip": {"schema": {"type": "string", "contentMediaType": "application/gzip"}},
              "application/octet-stream": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}
            }
          },
          "BadRequest": {
            "description": "The request is malformed: a parameter (a path segment that isn't percent-encoded UTF-8), a header, the JSON body; the message names what.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "NotFound": {"description": "No such note (or attachment, or version).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "Conflict": {
            "description": "The library's state is in the way: a note with that title exists, the note is damaged or of a newer format, the library is read-only, no such conflict version.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "PreconditionFailed": {
            "description": "The note changed since the `ETag` sent in `If-Match`: the current one is in the `ETag` header and in the body. Nothing was written.",
            "headers": {"ETag": {"$ref": "#/components/headers/OptionalETag"}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "TooLarge": {"description": "The body is larger than the server takes (`--max-body-bytes`, `--max-attachment-bytes`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "UnsupportedMediaType": {"description": "The body is not sent as `application/json`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "PreconditionRequired": {"description": "A write without `If-Match`: GET the note and send its `ETag`.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "Busy": {"description": "The note is locked by another process for longer than the server waits: try again.",
            "headers": {"Retry-After": {"required": true, "schema": {"type": "integer", "minimum": 0}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "InsufficientStorage": {"description": "The library's disk is full: nothing was written.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "MethodNotAllowed": {"description": "Any method a path doesn't list (every path answers it so); `Allow` lists those it does.",
            "headers": {"Allow": {"required": true, "schema": {"type": "string"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        },
        "schemas": {
          "EntityTag": {"type": "string", "pattern": "^\"[0-9a-f]{64}\"$", "description": "A strong entity tag: 64 hex digits of SHA-256, quoted."},
          "EntityTagCondition": {"description": "`*`, or a comma-separated list of quoted entity tags, `W/` for weak ones.",
            "anyOf": [{"const": "*"}, {"type": "string", "pattern": "^(W/)?\"[!#-~]*\"([ \\t]*,[ \\t]*(W/)?\"[!#-~]*\")*$"}]},
          "Title": {"type": "string",
            "description": "One line: trimmed of white space and line breaks, 1 to 1000 bytes of UTF-8 without control characters or line breaks.",
            "pattern": "^\#(titleSpace)*\#(titleVisible)(\#(titleCharacter){0,998}\#(titleVisible))?\#(titleSpace)*$"},
          "Tags": {"type": "array", "maxItems": 1000, "description": "At most 1000 tags, each 1 to 200 bytes of UTF-8 without control characters.",
            "items": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\x00-\\x1F\\x7F]+$"}},
          "NewNote": {"type": "object", "required": ["title"],
            "properties": {"title": {"$ref": "#/components/schemas/Title"}, "body": {"type": ["string", "null"]}, "tags": {"oneOf": [{"$ref": "#/components/schemas/Tags"}, {"type": "null"}]}}},
          "NoteChange": {"type": "object", "description": "What is given replaces what the note has; what is left out (or null) stays.",
            "properties": {"body": {"type": ["string", "null"]}, "tags": {"oneOf": [{"$ref": "#/components/schemas/Tags"}, {"type": "null"}]}}},
          "Rename": {"type": "object", "required": ["title"], "properties": {"title": {"$ref": "#/components/schemas/Title"}}},
          "Resolve": {"type": "object", "description": "`{\"keep\": \"current\"}`, `{\"keep\": VERSION}` (an unresolved conflict version's id) or `{\"merge\": true}`.",
            "oneOf": [
              {"required": ["keep"], "properties": {"keep": {"type": "string"}, "merge": {"enum": [false, null]}}},
              {"required": ["merge"], "properties": {"merge": {"const": true}, "keep": {"type": "null"}}}
            ]},
          "NoteListItem": {"type": "object", "additionalProperties": false, "required": ["id", "title", "url", "etag", "tags", "modified", "conflicts"],
            "properties": {
              "id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}, "url": {"type": "string", "pattern": "^/api/notes/[^/]+$"},
              "etag": {"$ref": "#/components/schemas/EntityTagOrEmpty"}, "tags": {"type": "array", "items": {"type": "string"}},
              "modified": {"type": "string", "format": "date-time"}, "conflicts": {"type": "integer", "minimum": 0}
            }},
          "Note": {"type": "object", "additionalProperties": false,
            "required": ["id", "title", "url", "etag", "tags", "modified", "created", "body", "formatVersion", "readOnly", "attachments", "conflicts"],
            "properties": {
              "id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}, "url": {"type": "string", "pattern": "^/api/notes/[^/]+$"},
              "etag": {"$ref": "#/components/schemas/EntityTagOrEmpty"}, "tags": {"type": "array", "items": {"type": "string"}},
              "modified": {"type": "string", "format": "date-time"}, "created": {"type": "string", "format": "date-time"}, "body": {"type": "string"},
              "formatVersion": {"type": "integer", "minimum": 1, "description": "The format version of the note on disk."},
              "readOnly": {"type": "boolean", "description": "Whether this server may only read the note (a newer format's rule)."},
              "attachments": {"type": "array", "items": {"$ref": "#/components/schemas/Attachment"}},
              "conflicts": {"type": "integer", "minimum": 0, "description": "How many unresolved conflict versions it has."}
            }},
          "Attachment": {"type": "object", "additionalProperties": false, "required": ["name", "url", "size", "mediaType", "etag"],
            "properties": {
              "name": {"type": "string"}, "url": {"type": "string", "pattern": "^/api/notes/[^/]+/attachments/[^/]+$"}, "size": {"type": "integer", "minimum": 0},
              "mediaType": {"type": "string"}, "etag": {"$ref": "#/components/schemas/EntityTagOrEmpty"}, "added": {"type": "string", "format": "date-time"}
            }},
          "Version": {"type": "object", "additionalProperties": false, "required": ["id", "url", "origin", "conflict", "resolved"],
            "properties": {
              "id": {"type": "string", "minLength": 1}, "url": {"type": "string", "pattern": "^/api/notes/[^/]+/versions/[^/]+$"},
              "etag": {"$ref": "#/components/schemas/EntityTag"}, "date": {"type": "string", "format": "date-time"},
              "host": {"type": "string"}, "user": {"type": "string"},
              "origin": {"type": "string", "enum": ["current", "save", "autosave", "conflict", "externalChange", "adoptedCopy", "added", "unknown"]},
              "conflict": {"type": "boolean"}, "resolved": {"type": "boolean"}
            }},
          "EntityTagOrEmpty": {"type": "string", "pattern": "^(\"[0-9a-f]{64}\")?$", "description": "An entity tag, or empty when the state has none."},
          "EventData": {"type": "object", "additionalProperties": false, "required": ["kind", "id", "title", "etag", "url", "conflicts"],
            "properties": {
              "kind": {"type": "string", "enum": ["created", "changed", "deleted"]}, "id": {"type": "string"}, "title": {"type": ["string", "null"]},
              "etag": {"oneOf": [{"$ref": "#/components/schemas/EntityTag"}, {"type": "null"}]}, "url": {"type": ["string", "null"]},
              "conflicts": {"type": ["integer", "null"], "minimum": 0,
                "description": "The note's unresolved conflict versions; null when deleted or not counted. A change of this number alone is an event."}
            }},
          "Error": {"type": "object", "additionalProperties": false, "required": ["error"],
            "properties": {"error": {"type": "object", "additionalProperties": false, "required": ["status", "code", "message"],
              "properties": {
                "status": {"type": "integer", "minimum": 400, "maximum": 599, "description": "The response's status."},
                "code": {"type": "string", "description": "A stable, machine-readable name: `noSuchNote`, `preconditionFailed`, …"},
                "message": {"type": "string", "description": "What is wrong, and what to do."},
                "etag": {"$ref": "#/components/schemas/EntityTag"}
              }}}}
        }
      }
    """#

    // The title's pattern, in parts (regular expressions as JSON text): `NotesAPI.checkTitle` trims
    // `titleSpace` (Foundation's whitespacesAndNewlines), then wants 1 to 1000 characters (the pattern
    // counts characters; the server bytes) of `titleCharacter`, first and last a `titleVisible`.
    static let titleSpace = #"[\\t\\n\\x0B\\x0C\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]"#
    static let titleVisible = #"[^\\x00-\\x20\\x7F\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]"#
    static let titleCharacter = #"[^\\x00-\\x1F\\x7F\\x85\\u2028\\u2029]"#
}
