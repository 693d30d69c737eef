-- leasehold's SQLite schema, receiver alone (component versions: receiver 1). Written by `npm run schema:sqlite`; do not edit.

-- table lh_receiver_lost
CREATE TABLE lh_receiver_lost (
  origin TEXT PRIMARY KEY,
  at INTEGER NOT NULL
) WITHOUT ROWID;

-- table lh_receiver_receipts
CREATE TABLE lh_receiver_receipts (
  origin TEXT NOT NULL,
  queue TEXT NOT NULL,
  counter INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  refused INTEGER NOT NULL,
  status INTEGER NOT NULL,
  body TEXT,
  low_water INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (origin, queue, counter)
) WITHOUT ROWID;

-- table lh_schema_versions
CREATE TABLE lh_schema_versions (
  component TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
