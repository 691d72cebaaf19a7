-- Webhooks (docs/rest.md "Webhooks"): URLs the master posts events to when
-- an experiment reaches a chosen state or a trial prints a line matching a
-- pattern, and each event's delivery. A delivery is written PENDING before
-- it is sent, so one a stopped master left is sent when it starts again.
-- Admins create webhooks; the secret signs each request (X-Ring-Signature).
CREATE TABLE webhooks (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT    NOT NULL UNIQUE CHECK (name <> ''),
  url         TEXT    NOT NULL,
  type        TEXT    NOT NULL CHECK (type IN ('DEFAULT', 'SLACK')),
  triggers    TEXT    NOT NULL,  -- JSON: [{"trigger_type", "condition": {"state"} or {"regex"}}]
  secret      TEXT    NOT NULL,
  created_by  TEXT    NOT NULL,
  created_at  TEXT    NOT NULL
);

CREATE TABLE webhook_deliveries (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id    INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_type    TEXT    NOT NULL CHECK (event_type IN ('EXPERIMENT_STATE_CHANGE', 'TASK_LOG', 'TEST')),
  event         TEXT    NOT NULL,  -- the JSON body as sent
  state         TEXT    NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED')),
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_status   INTEGER,           -- the HTTP status of the last answer; NULL when none came
  last_error    TEXT    NOT NULL DEFAULT '',
  created_at    TEXT    NOT NULL,
  delivered_at  TEXT               -- set when DELIVERED
);
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (state) WHERE state = 'PENDING';
