-- Checkpoint uuids the master issued to an allocation before its trial wrote
-- the files (POST /api/v1/allocations/{id}/checkpoints/prepare). A trial may
-- register only a uuid issued to its own allocation, in the folder the
-- master named; the row goes when the checkpoint is registered.
CREATE TABLE checkpoint_reservations (
  uuid           TEXT PRIMARY KEY CHECK (length(uuid) = 36),
  trial_id       INTEGER NOT NULL REFERENCES trials (id),
  allocation_id  TEXT NOT NULL,
  storage_json   TEXT NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE INDEX checkpoint_reservations_by_allocation ON checkpoint_reservations (allocation_id);
