-- The SQL text of Formats/document-index/v2/index.sqlite (sqlite3 .dump), for reading; the .sqlite
-- file is the fixture. PRAGMA user_version = 2 is not part of a dump: the file has it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
INSERT INTO meta VALUES('format','org.documentkit.document-index');
INSERT INTO meta VALUES('libraryPath','/library');
INSERT INTO meta VALUES('libraryDevice','2049');
INSERT INTO meta VALUES('libraryInode','2');
INSERT INTO meta VALUES('configuration','noteInfo.jsonorg.documentkit.test.note1titletitle,tags');
INSERT INTO meta VALUES('indexID','7E57A1D0-0000-4000-8000-0000000000FF');
INSERT INTO meta VALUES('sequence','5');
INSERT INTO meta VALUES('built','1');
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
INSERT INTO entries VALUES('Plan.note','','7E57A1D0-0000-4000-8000-000000000001','org.documentkit.test.note',1,'Plan','plan','{"tags":"[\"a\",\"b\"]","title":"\"Plan\""}',1700000000123456789,'current',NULL,NULL,X'0108000000000000e903000000000000001000000000000015cd853dfe9c971715cd853dfe9c9717',X'0108000000000000ea03000000000000410100000000000015cd853dfe9c971715cd853dfe9c9717',NULL);
INSERT INTO entries VALUES('Work/Half.note','Work','7E57A1D0-0000-4000-8000-000000000002','org.documentkit.test.note',1,'Half','half','{"tags":"[\"a\",\"b\"]","title":"\"Half\""}',1700000000123456789,'incomplete',NULL,'0 of 1 members match; body.txt is missing.',X'0108000000000000e903000000000000001000000000000015cd853dfe9c971715cd853dfe9c9717',X'0108000000000000ea03000000000000410100000000000015cd853dfe9c971715cd853dfe9c9717',NULL);
INSERT INTO entries VALUES('Work/Both.note','Work','7E57A1D0-0000-4000-8000-000000000003','org.documentkit.test.note',1,'Both','both','{"tags":"[\"a\",\"b\"]","title":"\"Both\""}',1700000000123456789,'conflicts',2,NULL,X'0108000000000000e903000000000000001000000000000015cd853dfe9c971715cd853dfe9c9717',X'0108000000000000ea03000000000000410100000000000015cd853dfe9c971715cd853dfe9c9717',X'0108000000000000e903000000000000001000000000000015cd853dfe9c971715cd853dfe9c9717');
INSERT INTO entries VALUES('New.note','','7E57A1D0-0000-4000-8000-000000000004','org.documentkit.test.note',1,'New','new','{"tags":"[\"a\",\"b\"]","title":"\"New\""}',1700000000123456789,'tooNew',3,NULL,X'0108000000000000e903000000000000001000000000000015cd853dfe9c971715cd853dfe9c9717',X'0108000000000000ea03000000000000410100000000000015cd853dfe9c971715cd853dfe9c9717',NULL);
INSERT INTO entries VALUES('Bad.note','',NULL,NULL,NULL,NULL,NULL,'{}',1700000000123456789,'damaged',NULL,'/library/Bad.note/Info.json: The manifest is malformed.',X'0108000000000000e903000000000000001000000000000015cd853dfe9c971715cd853dfe9c9717',X'0108000000000000ea03000000000000410100000000000015cd853dfe9c971715cd853dfe9c9717',NULL);
CREATE TABLE folders (path TEXT PRIMARY KEY NOT NULL, stamp BLOB NOT NULL);
INSERT INTO folders VALUES('',X'01080000000000000200000000000000001000000000000000002a36fe9c971700002a36fe9c9717');
INSERT INTO folders VALUES('Work',X'01080000000000000200000000000000001000000000000000002a36fe9c971700002a36fe9c9717');
CREATE TABLE accounted (path TEXT PRIMARY KEY NOT NULL, stamp BLOB NOT NULL);
INSERT INTO accounted VALUES('',X'01080000000000000200000000000000001000000000000000cac471fe9c971700cac471fe9c9717');
CREATE INDEX entries_by_key ON entries(key);
CREATE INDEX entries_by_folded_key ON entries(keyFolded);
CREATE INDEX entries_by_identifier ON entries(identifier);
CREATE INDEX entries_by_parent ON entries(parent);
COMMIT;
