-- End cause IDLE_TIMEOUT: a shell idle for its idle_timeout with no
-- terminal attached (docs/interactive.md "Shells"). The allocations table
-- is rebuilt as 0012 made it, with the new name allowed, keeping each row's
-- rowid; the index of live allocations that recovery reads, which 0012's
-- rebuild left out, is made again.
CREATE TABLE allocations_v17 (
  id          TEXT    PRIMARY KEY CHECK (id <> ''),
  task_id     INTEGER NOT NULL REFERENCES tasks (id),
  trial_id    INTEGER REFERENCES trials (id),
  state       TEXT    NOT NULL CHECK (state IN ('PENDING', 'ASSIGNED', 'STARTING', 'RUNNING',
                        'TERMINATING', 'TERMINATED')),
  token_hash  TEXT    NOT NULL DEFAULT '',
  slots       INTEGER NOT NULL DEFAULT 1 CHECK (slots >= 0),
  agent_ids   TEXT    NOT NULL DEFAULT '[]',
  exit_reason TEXT,
  exit_code   INTEGER,
  created_at  TEXT    NOT NULL,
  ended_at    TEXT,
  end_cause   TEXT CHECK (end_cause IN (
    'COMPLETED', 'FAILED', 'GANG_MEMBER_FAILED', 'USER_KILL', 'PAUSED', 'PREEMPTED', 'AGENT_LOST',
    'AGENT_RESTARTED', 'INVALID_HPARAMS', 'EXITED_EARLY', 'FENCED_OUT', 'SEARCHER_STOPPED',
    'IDLE_TIMEOUT'))
);
INSERT INTO allocations_v17 (rowid, id, task_id, trial_id, state, token_hash, slots, agent_ids, exit_reason,
                             exit_code, created_at, ended_at, end_cause)
  SELECT rowid, id, task_id, trial_id, state, token_hash, slots, agent_ids, exit_reason,
         exit_code, created_at, ended_at, end_cause
  FROM allocations
  ORDER BY rowid;
DROP TABLE allocations;
ALTER TABLE allocations_v17 RENAME TO allocations;
CREATE INDEX allocations_by_trial ON allocations (trial_id);
CREATE INDEX allocations_by_task ON allocations (task_id);
CREATE INDEX allocations_live ON allocations (state) WHERE state <> 'TERMINATED';
