-- Scheduling: an experiment's priority, weight and max_slots as changed live
-- (`ring experiment set`; NULL keeps the config's value), and agents that an
-- operator disabled (no new placements) or is draining (running work ends first).
CREATE TABLE experiment_resources (
  experiment_id INTEGER PRIMARY KEY REFERENCES experiments (id),
  priority      INTEGER CHECK (priority IS NULL OR (priority BETWEEN 1 AND 99)),
  weight        REAL    CHECK (weight IS NULL OR weight > 0),
  max_slots     INTEGER CHECK (max_slots IS NULL OR max_slots >= 1),
  updated_at    TEXT    NOT NULL
);

ALTER TABLE agents ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1));
ALTER TABLE agents ADD COLUMN draining INTEGER NOT NULL DEFAULT 0 CHECK (draining IN (0, 1));
