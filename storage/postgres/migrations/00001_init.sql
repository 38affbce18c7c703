-- +goose Up

-- People allowed (or once seen) talking to agents, keyed platform:user_id.
CREATE TABLE identities (
    identity     text PRIMARY KEY,
    display_name text        NOT NULL DEFAULT '',
    allowed      boolean     NOT NULL DEFAULT false,
    allowed_by   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- One conversation of one agent in one place (agentcore.SessionKey).
-- last_seq is the seq of the newest message; appends lock this row.
CREATE TABLE sessions (
    key        text PRIMARY KEY,
    agent      text        NOT NULL,
    scope      text        NOT NULL,
    last_seq   bigint      NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sessions_agent_idx ON sessions (agent, updated_at);

-- Every step of every conversation, in order. tool_calls is a JSON array of
-- {"id","name","arguments"} where arguments is the model's raw argument text.
CREATE TABLE messages (
    session_key  text        NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    seq          bigint      NOT NULL,
    role         text        NOT NULL CHECK (role <> ''),
    content      text        NOT NULL DEFAULT '',
    tool_calls   jsonb,
    tool_call_id text        NOT NULL DEFAULT '',
    tool_name    text        NOT NULL DEFAULT '',
    is_error     boolean     NOT NULL DEFAULT false,
    external_id  text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_key, seq)
);

CREATE UNIQUE INDEX messages_session_external_id_key
    ON messages (session_key, external_id)
    WHERE external_id IS NOT NULL;

-- Replies waiting to be delivered, and a record of those that were.
CREATE TABLE outbox (
    id                  bigserial PRIMARY KEY,
    session_key         text,
    source_seq          bigint,
    platform            text        NOT NULL,
    chat_id             text        NOT NULL,
    thread_id           text        NOT NULL DEFAULT '',
    text                text        NOT NULL DEFAULT '',
    buttons             jsonb,
    reply_to            text        NOT NULL DEFAULT '',
    status              text        NOT NULL DEFAULT 'pending'
                                    CHECK (status IN ('pending', 'sent', 'failed')),
    attempts            integer     NOT NULL DEFAULT 0,
    next_attempt_at     timestamptz NOT NULL DEFAULT now(),
    claimed_by          text,
    claimed_until       timestamptz,
    platform_message_id text,
    last_error          text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    sent_at             timestamptz
);

CREATE UNIQUE INDEX outbox_session_source_seq_key
    ON outbox (session_key, source_seq)
    WHERE source_seq IS NOT NULL AND source_seq > 0;

CREATE INDEX outbox_status_next_attempt_idx ON outbox (status, next_attempt_at);

-- +goose Down
DROP TABLE outbox;
DROP TABLE messages;
DROP TABLE sessions;
DROP TABLE identities;
