-- Warm start (searcher.source_trial_id / source_checkpoint_uuid): the
-- checkpoint every trial of the experiment starts from, resolved once at
-- submit so that later checkpoints of a source trial do not change it. NULL:
-- the trials start from nothing.
ALTER TABLE experiments ADD COLUMN warm_start_checkpoint TEXT REFERENCES checkpoints (uuid);
-- Garbage collection asks which checkpoints live experiments start from.
CREATE INDEX experiments_by_warm_start ON experiments (warm_start_checkpoint)
  WHERE warm_start_checkpoint IS NOT NULL;
