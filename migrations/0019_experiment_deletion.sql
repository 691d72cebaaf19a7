-- An experiment being deleted (DELETE /api/v1/experiments/{id}): set before
-- the answer, so that a master stopped halfway finishes the deletion after
-- its restart. Its checkpoint folders go first, then every row of it and of
-- its trials in one transaction.
ALTER TABLE experiments ADD COLUMN deleting_at TEXT;
