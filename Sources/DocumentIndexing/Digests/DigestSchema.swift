import GRDB

/// The schema of the member digest cache, `Formats/member-digests/v1/SPEC.md`.
enum DigestSchema {
    /// `PRAGMA application_id`: "DKMD" (DocumentKit member digests).
    static let applicationID: Int32 = 0x444B_4D44
    /// `PRAGMA user_version`: the format version this code reads and writes.
    static let version: Int32 = 1

    /// The statements that make an empty cache (the fixture's `make-fixture.sql` runs them too).
    static let creation = """
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = \(version);
        CREATE TABLE package (
            path TEXT NOT NULL PRIMARY KEY,
            recordedAt INTEGER NOT NULL,
            members BLOB NOT NULL
        );
        """

    /// Checks the file's schema, making it in a new file; returns what is wrong with a file that
    /// is foreign or newer, nil if it is usable.
    static func prepare(_ db: Database) throws -> String? {
        // The usual case, a file made before, is only read: no write lock at each process start.
        if try Int32.fetchOne(db, sql: "PRAGMA application_id") == applicationID,
            try Int32.fetchOne(db, sql: "PRAGMA user_version") == version, try db.tableExists("package")
        {
            return nil
        }
        var problem: String?
        try db.inTransaction(.immediate) {
            let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let version = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
            if application == 0, version == 0, tables == 0 {
                try db.execute(sql: creation)
                return .commit
            }
            if application != applicationID {
                problem = "is not a DocumentKit member digest cache (application id \(application))"
            } else if version > Self.version {
                problem = "was written by a newer DocumentKit (format version \(version); this one reads \(Self.version))"
            } else if try version < 1 || !db.tableExists("package") {
                problem = "has no table of digests"
            }
            return .commit
        }
        return problem
    }
}
