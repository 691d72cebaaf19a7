-- Config templates (ring template set|list|describe|delete): named partial
-- experiment configs an experiment starts from (`--template NAME`); the
-- experiment's own keys win. Owned by who set them first.
CREATE TABLE templates (
  name        TEXT PRIMARY KEY CHECK (name <> ''),
  config_yaml TEXT NOT NULL,
  owner       TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
