-- Checkpoints registered by trials once completely written.
CREATE TABLE checkpoints (
  uuid            TEXT PRIMARY KEY CHECK (length(uuid) > 0),
  trial_id        INTEGER NOT NULL REFERENCES trials (id),
  allocation_id   TEXT NOT NULL,
  batches         INTEGER NOT NULL CHECK (batches >= 0),
  state           TEXT NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'DELETED')),
  storage_json    TEXT NOT NULL,
  resources_json  TEXT NOT NULL,
  metadata_json   TEXT NOT NULL,
  created_at      TEXT NOT NULL
);
CREATE INDEX checkpoints_by_trial ON checkpoints (trial_id, batches);
