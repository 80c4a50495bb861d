-- Makes fixtures/member-digests.sqlite (sqlite3 member-digests.sqlite < make-fixture.sql):
-- the schema DocumentKit's PersistentMemberDigestCache makes (DigestSchema.creation), and the
-- row it recorded after verifying fixtures/Example.test (its path then set to /home/user/Notes/Example.test).
PRAGMA application_id = 1145785668;
PRAGMA user_version = 1;
BEGIN TRANSACTION;
CREATE TABLE package (
    path TEXT NOT NULL PRIMARY KEY,
    recordedAt INTEGER NOT NULL,
    members BLOB NOT NULL
);
INSERT INTO package VALUES('/home/user/Notes/Example.test',1795568858607127951,X'00fe0000000000002b01fb00000000000900000000000000222e13c25a24eb18222e13c25a24eb188f0d08135d24eb1822fb3c3a7efc8fe716494d3e60572c0203871a227ce87e2fd0c45ee77bab716f00fe0000000000003201fb00000000000900000000000000222e13c25a24eb18222e13c25a24eb188f0d08135d24eb1821d996731ed8dc6f78cb198fe8132adb66fdfc245b6a7264028bfae9f866f98100fe0000000000004201fb00000000000900000000000000222e13c25a24eb18222e13c25a24eb188f0d08135d24eb18eeb50760f89c47d8798a6e12ba0ed47f30085c1314831355b0653b0b4e287087');
COMMIT;
