-- Users and their sessions. Passwords are stored only as Argon2id hashes
-- (libsodium's self-describing string); session tokens only as the SHA-256
-- of the token, so a copy of the database signs nobody in.
CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  username      TEXT    NOT NULL UNIQUE,
  password_hash TEXT    NOT NULL,
  role          TEXT    NOT NULL CHECK (role IN ('admin', 'user')),
  active        INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  created_at    TEXT    NOT NULL
);

CREATE TABLE sessions (
  token_hash TEXT    PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id),
  created_at TEXT    NOT NULL,
  expires_at TEXT    NOT NULL  -- RFC 3339 UTC with milliseconds, so text order is time order
);
CREATE INDEX sessions_by_user ON sessions (user_id);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);
