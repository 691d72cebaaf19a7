-- Agent enrolments: the cluster token only enrols an agent; the master then
-- issues that agent id a credential of its own, bound to the id here. Only
-- the SHA-256 of the credential is stored (like sign-in tokens), so a copy of
-- the database lets nobody pose as an agent. The pool and slot count are the
-- ones the agent enrolled with: a hello may not move the agent to another
-- pool or offer more slots (an admin raises `slots`). A removed agent keeps
-- its row with `revoked_at` set until it enrols again with the cluster token.
CREATE TABLE agent_enrolments (
  agent_id        TEXT    PRIMARY KEY CHECK (agent_id <> ''),
  credential_hash TEXT    NOT NULL,
  pool            TEXT    NOT NULL,
  slots           INTEGER NOT NULL CHECK (slots >= 0),
  enrolled_at     TEXT    NOT NULL,
  revoked_at      TEXT    -- NULL while the credential is valid
);
