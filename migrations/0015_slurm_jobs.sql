-- The Slurm job of each live allocation on a Slurm pool (master/rm/slurmrm,
-- docs/slurm.md): its job id, the SHA-256 of the credential its job's agents
-- present and how its ranks were laid out, so that a restarted master finds
-- the job again and lets its agents back in. A row goes when its allocation
-- ends.
CREATE TABLE slurm_jobs (
  allocation_id   TEXT    PRIMARY KEY CHECK (allocation_id <> ''),
  job_id          INTEGER NOT NULL CHECK (job_id > 0),
  pool            TEXT    NOT NULL,
  credential_hash TEXT    NOT NULL,
  per_node        INTEGER NOT NULL DEFAULT 0 CHECK (per_node IN (0, 1)),
  created_at      TEXT    NOT NULL
);
