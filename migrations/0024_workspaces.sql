-- Workspaces and projects (ring workspace ..., ring project ...; docs/rest.md
-- "Workspaces and projects"). Every experiment belongs to a project, and every
-- project to a workspace. Workspace 1 "Uncategorized" holds every user
-- without membership rows; its project 1 "Uncategorized" takes every
-- experiment that existed before this migration and every experiment
-- submitted without a project.
CREATE TABLE workspaces (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE CHECK (name <> ''),
  description TEXT NOT NULL DEFAULT '',
  created_by  TEXT NOT NULL,
  archived    INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  created_at  TEXT NOT NULL
);

-- A member's role in one workspace: ADMIN manages it (members, pools,
-- projects), MEMBER works in it.
CREATE TABLE workspace_members (
  workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
  username     TEXT NOT NULL,
  role         TEXT NOT NULL CHECK (role IN ('ADMIN', 'MEMBER')),
  PRIMARY KEY (workspace_id, username)
);
CREATE INDEX workspace_members_by_user ON workspace_members (username);

-- Pools a workspace is bound to: its members may submit there; the one
-- marked is_default is where their experiments go when the config names
-- no pool.
CREATE TABLE workspace_pools (
  workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
  pool         TEXT NOT NULL,
  is_default   INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  PRIMARY KEY (workspace_id, pool)
);

CREATE TABLE projects (
  id           INTEGER PRIMARY KEY,
  workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
  name         TEXT NOT NULL CHECK (name <> ''),
  description  TEXT NOT NULL DEFAULT '',
  created_by   TEXT NOT NULL,
  archived     INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  created_at   TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);

INSERT INTO workspaces (id, name, description, created_by, created_at)
  VALUES (1, 'Uncategorized', 'every user; experiments submitted without a project', 'admin',
          strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
INSERT INTO projects (id, workspace_id, name, description, created_by, created_at)
  VALUES (1, 1, 'Uncategorized', 'experiments submitted without a project', 'admin',
          strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- (SQLite adds no column with a REFERENCES clause and a default; the store
-- checks the project on every write.)
ALTER TABLE experiments ADD COLUMN project_id INTEGER NOT NULL DEFAULT 1;
CREATE INDEX experiments_by_project ON experiments (project_id);
