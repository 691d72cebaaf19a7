-- log_policies (docs/experiment-config.md): the first line of a trial's
-- output that matched each policy on each node. cancel_retries rows stop
-- the trial's restarts (rule F15 of docs/failure-model.md); exclude_node
-- rows keep its later allocations off that node; the latest row's policy is
-- the trial's log signal.
CREATE TABLE log_policy_matches (
  id             INTEGER PRIMARY KEY,
  trial_id       INTEGER NOT NULL REFERENCES trials (id),
  policy         TEXT    NOT NULL,
  action         TEXT    NOT NULL CHECK (action IN ('', 'cancel_retries', 'exclude_node')),
  node           TEXT    NOT NULL,
  allocation_id  TEXT    NOT NULL,
  rank           INTEGER NOT NULL,
  line           TEXT    NOT NULL,
  matched_at     TEXT    NOT NULL,
  UNIQUE (trial_id, policy, node)
);
