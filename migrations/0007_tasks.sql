-- Tasks: what holds slots. A trial is a task of kind TRIAL (with an
-- experiment, hyperparameters and checkpoints); commands, shells and
-- notebooks are tasks with no trial. An allocation is one attempt of a task
-- on resources, so it names its task, and its trial only when the task is
-- one. Every existing trial gets a task with the trial's id (AUTOINCREMENT
-- then numbers new tasks after them), and every allocation its trial's task.

CREATE TABLE tasks (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  kind       TEXT    NOT NULL CHECK (kind IN ('TRIAL', 'COMMAND', 'SHELL', 'NOTEBOOK')),
  owner      TEXT    NOT NULL DEFAULT '',
  created_at TEXT    NOT NULL,
  ended_at   TEXT
);

INSERT INTO tasks (id, kind, owner, created_at, ended_at)
  SELECT t.id, 'TRIAL', e.owner, t.created_at, t.ended_at
  FROM trials t JOIN experiments e ON e.id = t.experiment_id
  ORDER BY t.id;

ALTER TABLE trials ADD COLUMN task_id INTEGER REFERENCES tasks (id);
UPDATE trials SET task_id = id;
CREATE UNIQUE INDEX trials_by_task ON trials (task_id);

-- SQLite cannot drop a NOT NULL: the allocations table is rebuilt, keeping
-- each row's rowid (its creation order).
CREATE TABLE allocations_v7 (
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
    'AGENT_RESTARTED', 'INVALID_HPARAMS', 'EXITED_EARLY', 'FENCED_OUT'))
);
INSERT INTO allocations_v7 (rowid, id, task_id, trial_id, state, token_hash, slots, agent_ids, exit_reason,
                            exit_code, created_at, ended_at, end_cause)
  SELECT a.rowid, a.id, t.task_id, a.trial_id, a.state, a.token_hash, a.slots, a.agent_ids, a.exit_reason,
         a.exit_code, a.created_at, a.ended_at, a.end_cause
  FROM allocations a JOIN trials t ON t.id = a.trial_id
  ORDER BY a.rowid;
DROP TABLE allocations;
ALTER TABLE allocations_v7 RENAME TO allocations;
CREATE INDEX allocations_by_trial ON allocations (trial_id);
CREATE INDEX allocations_by_task ON allocations (task_id);
-- Recovery reads the live allocations only.
CREATE INDEX allocations_live ON allocations (state) WHERE state <> 'TERMINATED';
