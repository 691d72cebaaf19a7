-- An experiment's description and labels as edited after submit (PATCH
-- /api/v1/experiments/{id}); while NULL, the config's are shown. The name
-- is edited in place.
ALTER TABLE experiments ADD COLUMN description TEXT;
ALTER TABLE experiments ADD COLUMN labels_json TEXT;
