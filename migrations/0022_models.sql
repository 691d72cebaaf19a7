-- The model registry (ring model ..., docs/rest.md "Models"): named models, each
-- with numbered versions; a version is a registered checkpoint with a name,
-- notes, metadata and labels of its own. A checkpoint that is a version is
-- never garbage collected, and its experiment is not deleted while it is
-- one. Version numbers count up per model and are never given twice
-- (last_version), even after a version is deleted.
CREATE TABLE models (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL UNIQUE CHECK (name <> ''),
  description  TEXT NOT NULL DEFAULT '',
  labels_json  TEXT NOT NULL DEFAULT '[]',
  owner        TEXT NOT NULL,
  archived     INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  last_version INTEGER NOT NULL DEFAULT 0,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);

CREATE TABLE model_versions (
  model_id        INTEGER NOT NULL REFERENCES models (id),
  version         INTEGER NOT NULL CHECK (version >= 1),
  checkpoint_uuid TEXT NOT NULL REFERENCES checkpoints (uuid),
  name            TEXT NOT NULL DEFAULT '',
  notes           TEXT NOT NULL DEFAULT '',
  metadata_json   TEXT NOT NULL DEFAULT '{}',
  labels_json     TEXT NOT NULL DEFAULT '[]',
  created_by      TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (model_id, version)
);
CREATE INDEX model_versions_by_checkpoint ON model_versions (checkpoint_uuid);
