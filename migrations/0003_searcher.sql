-- Searchers: each trial remembers the searcher's id for it, and each
-- experiment's searcher state is kept as a JSON snapshot, written in the same
-- transaction as the trials its decisions create.
ALTER TABLE trials ADD COLUMN request_id INTEGER;
CREATE UNIQUE INDEX trials_by_request ON trials (experiment_id, request_id) WHERE request_id IS NOT NULL;

CREATE TABLE searcher_snapshots (
  experiment_id INTEGER PRIMARY KEY REFERENCES experiments (id),
  snapshot      TEXT    NOT NULL,
  events        INTEGER NOT NULL DEFAULT 0 CHECK (events >= 0),
  updated_at    TEXT    NOT NULL
);
