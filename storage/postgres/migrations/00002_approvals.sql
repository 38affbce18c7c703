-- +goose Up

-- Requests for humans to allow one risky tool call. session_key and
-- tool_call_id are NULL when the caller has none, so such approvals are never
-- merged with another one.
CREATE TABLE approvals (
    id           text        PRIMARY KEY CHECK (id <> ''),
    tool         text        NOT NULL CHECK (tool <> ''),
    command      text        NOT NULL DEFAULT '',
    cwd          text        NOT NULL DEFAULT '',
    pattern      text        NOT NULL DEFAULT '',
    agent        text        NOT NULL DEFAULT '',
    session_key  text,
    tool_call_id text,
    requester    text        NOT NULL DEFAULT '',
    platform     text        NOT NULL DEFAULT '',
    chat_id      text        NOT NULL DEFAULT '',
    thread_id    text        NOT NULL DEFAULT '',
    status       text        NOT NULL DEFAULT 'pending'
                             CHECK (status IN ('pending', 'allowed_once', 'allowed_always', 'denied', 'expired')),
    decided_by   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    decided_at   timestamptz,
    UNIQUE (session_key, tool_call_id)
);

CREATE INDEX approvals_pending_idx ON approvals (created_at, id) WHERE status = 'pending';

-- Command patterns humans chose to "Always allow" for a tool.
CREATE TABLE allow_always (
    tool       text        NOT NULL CHECK (tool <> ''),
    pattern    text        NOT NULL CHECK (pattern <> ''),
    created_by text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tool, pattern)
);

-- Unknown people's requests to talk to the agents. At most one is pending
-- per identity.
CREATE TABLE access_requests (
    id           text        PRIMARY KEY CHECK (id <> ''),
    identity     text        NOT NULL CHECK (identity <> ''),
    display_name text        NOT NULL DEFAULT '',
    platform     text        NOT NULL CHECK (platform <> ''),
    chat_id      text        NOT NULL DEFAULT '',
    thread_id    text        NOT NULL DEFAULT '',
    status       text        NOT NULL DEFAULT 'pending'
                             CHECK (status IN ('pending', 'approved', 'denied')),
    decided_by   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz
);

CREATE UNIQUE INDEX access_requests_pending_identity_key
    ON access_requests (identity)
    WHERE status = 'pending';

CREATE INDEX access_requests_platform_status_idx ON access_requests (platform, status);

-- Finds a recent denial of an identity (the cooldown before it may ask again).
CREATE INDEX access_requests_denied_identity_idx
    ON access_requests (identity, decided_at)
    WHERE status = 'denied';

-- Messages posted about an approval or access request (kind, subject_id), so
-- they can be edited once it is decided.
CREATE TABLE decision_messages (
    kind       text   NOT NULL CHECK (kind <> ''),
    subject_id text   NOT NULL CHECK (subject_id <> ''),
    outbox_id  bigint NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
    role       text   NOT NULL DEFAULT '',
    PRIMARY KEY (kind, subject_id, outbox_id)
);

CREATE INDEX decision_messages_outbox_idx ON decision_messages (outbox_id);

-- Who did what, when: every request and decision of approvals and access.
CREATE TABLE audit_log (
    id           bigserial   PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT now(),
    actor        text        NOT NULL DEFAULT '',
    action       text        NOT NULL CHECK (action <> ''),
    subject_kind text        NOT NULL DEFAULT '',
    subject_id   text        NOT NULL DEFAULT '',
    detail       jsonb
);

CREATE INDEX audit_log_subject_idx ON audit_log (subject_kind, subject_id);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE decision_messages;
DROP TABLE access_requests;
DROP TABLE allow_always;
DROP TABLE approvals;
