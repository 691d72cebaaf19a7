-- Users linked to a Unix account: an agent that can switch users runs each
-- of the user's tasks as this uid and gid (the names are kept for
-- supplementary groups and for people). NULL uid: not linked. Agents record
-- whether they run tasks as their owners (1) or in single-user mode (0).
ALTER TABLE users ADD COLUMN unix_uid INTEGER CHECK (unix_uid IS NULL OR unix_uid BETWEEN 1 AND 4294967294);
ALTER TABLE users ADD COLUMN unix_gid INTEGER CHECK (unix_gid IS NULL OR unix_gid BETWEEN 1 AND 4294967294);
ALTER TABLE users ADD COLUMN unix_user TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN unix_group TEXT NOT NULL DEFAULT '';

ALTER TABLE agents ADD COLUMN runs_as_owner INTEGER NOT NULL DEFAULT 0 CHECK (runs_as_owner IN (0, 1));
