-- The same SQL for sqlite3 and sqlcipher (reference point for SQLCipher's own overhead; see
-- BENCHMARKS.md, "Encryption at rest"). run.sh prepends `PRAGMA key` for sqlcipher.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT, n INTEGER);
CREATE INDEX t_n ON t(n);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
INSERT INTO t SELECT x, printf('row %d %s', x, hex(randomblob(100))), abs(random()) % 1000 FROM c;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
