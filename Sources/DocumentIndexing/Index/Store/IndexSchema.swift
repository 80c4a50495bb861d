import GRDB

/// The persisted index's schema, version 1 (`Formats/document-index/v1/SPEC.md`).
enum IndexSchema {
    /// `PRAGMA user_version` of the files this code writes; a higher one is a newer format, rebuilt.
    static let version = 1
    /// The `format` row of the `meta` table: a database without it is not an index.
    static let formatIdentifier = "org.documentkit.document-index"

    /// The statements that make an empty version 1 index.
    static let creation = """
        CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
        CREATE TABLE entries (
            path TEXT PRIMARY KEY NOT NULL,
            parent TEXT NOT NULL,
            identifier TEXT,
            format TEXT,
            version INTEGER,
            key TEXT,
            keyFolded TEXT,
            fields TEXT NOT NULL,
            modified INTEGER,
            state TEXT NOT NULL,
            stateCount INTEGER,
            stateDetail TEXT,
            packageStamp BLOB NOT NULL,
            manifestStamp BLOB,
            conflictStamp BLOB
        );
        CREATE INDEX entries_by_key ON entries(key);
        CREATE INDEX entries_by_folded_key ON entries(keyFolded);
        CREATE INDEX entries_by_identifier ON entries(identifier);
        CREATE INDEX entries_by_parent ON entries(parent);
        CREATE TABLE folders (path TEXT PRIMARY KEY NOT NULL, stamp BLOB NOT NULL);
        PRAGMA user_version = 1;
        """
}
