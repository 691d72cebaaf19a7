-- The scheduling an admin set on an experiment is the bound for its owner:
-- the owner may lower its priority (a larger number) and its max_slots, but
-- not raise them past what the admin set. NULL: no admin has set one.
ALTER TABLE experiment_resources ADD COLUMN admin_priority INTEGER
  CHECK (admin_priority IS NULL OR (admin_priority BETWEEN 1 AND 99));
ALTER TABLE experiment_resources ADD COLUMN admin_max_slots INTEGER
  CHECK (admin_max_slots IS NULL OR admin_max_slots >= 1);
