-- +goose Up

-- Skills published with publish_skill, one row per version. A row is first
-- the snapshot the approvers were shown (pending), keyed by the tool call
-- that asked, so what is published is exactly what they saw; a Publish
-- makes it published with the next version number of its name, a Reject
-- (or no decision) makes it rejected. The newest published version of a
-- name is the one agents see.
CREATE TABLE IF NOT EXISTS skills (
    id           bigserial   PRIMARY KEY,
    name         text        NOT NULL CHECK (name <> ''),
    description  text        NOT NULL CHECK (description <> ''),
    body         text        NOT NULL DEFAULT '',
    status       text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'published', 'rejected')),
    version      integer     CHECK (version IS NULL OR version > 0),
    session_key  text        NOT NULL,
    tool_call_id text        NOT NULL,
    agent        text        NOT NULL DEFAULT '',
    requester    text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    UNIQUE (session_key, tool_call_id),
    UNIQUE (name, version),
    CHECK ((status = 'published') = (version IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS skills_published_idx ON skills (name, version DESC) WHERE status = 'published';

-- The files of each snapshot (SKILL.md included), paths relative to the
-- skill's folder.
CREATE TABLE IF NOT EXISTS skill_files (
    skill_id bigint NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    path     text   NOT NULL CHECK (path <> ''),
    data     bytea  NOT NULL,
    PRIMARY KEY (skill_id, path)
);

-- Skills an admin turned off with /skills disable, by name, whatever
-- their source; shared by every replica.
CREATE TABLE IF NOT EXISTS skill_states (
    name       text        PRIMARY KEY CHECK (name <> ''),
    disabled   boolean     NOT NULL,
    changed_by text        NOT NULL DEFAULT '',
    changed_at timestamptz NOT NULL DEFAULT now()
);

-- The verb an approval's buttons read ('publish': Publish / Reject, no
-- Always allow); '' is Allow once / Always allow / Deny.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS verb text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE approvals DROP COLUMN IF EXISTS verb;
DROP TABLE IF EXISTS skill_states;
DROP TABLE IF EXISTS skill_files;
DROP TABLE IF EXISTS skills;
