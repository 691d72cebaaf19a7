-- Ringmaster schema, version 1.
-- Applied by master/store/migrator.cc in one transaction together with its row
-- in schema_migrations. Never edit a released migration: add a new numbered file
-- and list it in master/store/CMakeLists.txt.
--
-- Conventions: timestamps are RFC 3339 UTC text; an empty optional value is NULL;
-- ids of experiments, trials and logs come from AUTOINCREMENT so they are never
-- reused, even after rows are deleted. Each CHECK has a twin in MemoryStore.

CREATE TABLE experiments (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  name            TEXT    NOT NULL DEFAULT '',
  owner           TEXT    NOT NULL DEFAULT '',
  config_yaml     TEXT    NOT NULL,
  state           TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'STOPPING_COMPLETED',
                            'STOPPING_CANCELED', 'STOPPING_ERROR', 'COMPLETED', 'CANCELED', 'ERROR')),
  archived        INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  progress        REAL    NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
  best_trial_id   INTEGER REFERENCES trials (id),
  best_validation REAL,
  created_at      TEXT    NOT NULL,
  ended_at        TEXT,
  -- Last, so reading the other columns never walks the blob's overflow pages.
  model_definition BLOB   NOT NULL
);

CREATE TABLE trials (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  experiment_id     INTEGER NOT NULL REFERENCES experiments (id),
  state             TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'STOPPING_COMPLETED',
                              'STOPPING_CANCELED', 'STOPPING_ERROR', 'COMPLETED', 'CANCELED', 'ERROR')),
  hparams           TEXT    NOT NULL DEFAULT '{}',
  seed              INTEGER NOT NULL DEFAULT 0,
  restarts          INTEGER NOT NULL DEFAULT 0 CHECK (restarts >= 0),
  total_batches     INTEGER NOT NULL DEFAULT 0 CHECK (total_batches >= 0),
  best_validation   REAL,
  latest_checkpoint TEXT,
  created_at        TEXT    NOT NULL,
  ended_at          TEXT
);
CREATE INDEX trials_by_experiment ON trials (experiment_id, id);

-- One row per attempt of a trial; listed in creation (rowid) order.
CREATE TABLE allocations (
  id          TEXT    PRIMARY KEY CHECK (id <> ''),
  trial_id    INTEGER NOT NULL REFERENCES trials (id),
  state       TEXT    NOT NULL CHECK (state IN ('PENDING', 'ASSIGNED', 'STARTING', 'RUNNING',
                        'TERMINATING', 'TERMINATED')),
  token_hash  TEXT    NOT NULL DEFAULT '',
  slots       INTEGER NOT NULL DEFAULT 1 CHECK (slots >= 0),
  agent_ids   TEXT    NOT NULL DEFAULT '[]',
  exit_reason TEXT,
  exit_code   INTEGER,
  created_at  TEXT    NOT NULL,
  ended_at    TEXT
);
CREATE INDEX allocations_by_trial ON allocations (trial_id);
-- Recovery reads the live allocations only.
CREATE INDEX allocations_live ON allocations (state) WHERE state <> 'TERMINATED';

-- A retried report with the same (trial, kind, batches) is ignored; the unique
-- index also serves "metrics of a trial by kind, in batch order".
CREATE TABLE metrics (
  id            INTEGER PRIMARY KEY,
  trial_id      INTEGER NOT NULL REFERENCES trials (id),
  kind          TEXT    NOT NULL CHECK (kind IN ('training', 'validation')),
  batches       INTEGER NOT NULL CHECK (batches >= 0),
  metrics       TEXT    NOT NULL DEFAULT '{}',
  allocation_id TEXT    NOT NULL DEFAULT '',
  reported_at   TEXT    NOT NULL,
  UNIQUE (trial_id, kind, batches)
);

-- Log lines; `id` is the offset clients page and follow with.
CREATE TABLE logs (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  trial_id      INTEGER NOT NULL REFERENCES trials (id),
  allocation_id TEXT    NOT NULL DEFAULT '',
  rank          INTEGER NOT NULL DEFAULT 0,
  stream        TEXT    NOT NULL DEFAULT '',
  line          TEXT    NOT NULL,
  ts_ms         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX logs_by_trial ON logs (trial_id, id);

CREATE TABLE agents (
  id            TEXT PRIMARY KEY CHECK (id <> ''),
  pool          TEXT NOT NULL DEFAULT '',
  address       TEXT NOT NULL DEFAULT '',
  state         TEXT NOT NULL CHECK (state IN ('connected', 'lost', 'disconnected')),
  slots         TEXT NOT NULL DEFAULT '[]',
  registered_at TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL
);
