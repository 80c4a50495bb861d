import GRDB

/// The persisted index's schema, version 3 (`Formats/document-index/v3/SPEC.md`): version 1,
/// the table `accounted` (v2) and the column `entries.memberFolders` (v3).
enum IndexSchema {
    /// `PRAGMA user_version` of the files this code writes; a higher one is a newer format, rebuilt.
    static let version = 3
    /// The `format` row of the `meta` table: a database without it is not an index.
    static let formatIdentifier = "org.documentkit.document-index"

    /// The statements that make an empty index of this version.
    static let creation = version1 + migrationFrom1 + migrationFrom2

    /// What makes a version 2 index a version 3 one: the stamps of the package subfolders that
    /// hold listed members (NULL: the manifest lists none in a subfolder). A version 2 index kept
    /// none, so each of its entries gets the empty blob, "not known": it is read again once.
    static let migrationFrom2 = """
        ALTER TABLE entries ADD COLUMN memberFolders BLOB;
        UPDATE entries SET memberFolders = X'';
        PRAGMA user_version = 3;
        """

    /// What makes a version 1 index a version 2 one: the folders whose names this or another
    /// process accounted for after its own change, without listing them.
    static let migrationFrom1 = """
        CREATE TABLE accounted (path TEXT PRIMARY KEY NOT NULL, stamp BLOB NOT NULL);
        PRAGMA user_version = 2;
        """

    /// The statements that made an empty version 1 index (`Formats/document-index/v1`).
    static let version1 = """
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
