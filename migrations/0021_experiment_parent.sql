-- The experiment an experiment was forked from (ring experiment fork), for
-- the link both pages show; NULL for one submitted afresh, and set to NULL
-- when the parent is deleted.
ALTER TABLE experiments ADD COLUMN parent_id INTEGER;
