-- +goose Up

-- Who may use an MCP server's tools beyond the config's grants: an agent or
-- a person (platform:user_id), for the tools in allow (empty: all of them)
-- except those in deny. Created when an admin approves a grant request, in
-- the same transaction as the decision.
CREATE TABLE tool_grants (
    id           bigserial PRIMARY KEY,
    server       text        NOT NULL,
    subject_kind text        NOT NULL CHECK (subject_kind IN ('agent', 'user')),
    subject      text        NOT NULL,
    allow        text[]      NOT NULL DEFAULT '{}',
    deny         text[]      NOT NULL DEFAULT '{}',
    granted_by   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (server, subject_kind, subject)
);

-- A request for one tool of a server, asked of the admins with buttons.
CREATE TABLE grant_requests (
    id           text        PRIMARY KEY,
    server       text        NOT NULL,
    tool         text        NOT NULL,
    agent        text        NOT NULL,
    subject_kind text        NOT NULL CHECK (subject_kind IN ('agent', 'user')),
    subject      text        NOT NULL,
    platform     text        NOT NULL DEFAULT '',
    chat_id      text        NOT NULL DEFAULT '',
    thread_id    text        NOT NULL DEFAULT '',
    status       text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
    decided_by   text,
    decided_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX grant_requests_one_pending
    ON grant_requests (server, tool, subject_kind, subject) WHERE status = 'pending';

-- +goose Down
DROP TABLE grant_requests;
DROP TABLE tool_grants;
