-- Tasks that are not trials (commands now; shells and notebooks next) keep
-- their settings and their context folder with them, so that a restarted
-- master can run and serve them: `spec` is the task's effective config
-- (TaskSpec as JSON, written by master/store/record_json.cc), `context` its
-- context folder as tar.gz (NULL when none was sent).
ALTER TABLE tasks ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN context BLOB;

-- Log lines of tasks that are not trials; `id` is the offset clients page
-- and follow with, as in `logs`.
CREATE TABLE task_logs (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id       INTEGER NOT NULL REFERENCES tasks (id),
  allocation_id TEXT    NOT NULL DEFAULT '',
  rank          INTEGER NOT NULL DEFAULT 0,
  stream        TEXT    NOT NULL DEFAULT '',
  line          TEXT    NOT NULL,
  ts_ms         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX task_logs_by_task ON task_logs (task_id, id);
CREATE INDEX tasks_by_kind ON tasks (kind, id);
