-- +goose Up

-- One-time login links of the admin console (/login): only the SHA-256 of
-- the token is kept, so the table never holds a usable link. A link is
-- used once (used_at) and only before expires_at.
CREATE TABLE IF NOT EXISTS console_login_links (
    token_hash bytea       PRIMARY KEY CHECK (length(token_hash) = 32),
    identity   text        NOT NULL CHECK (identity <> ''),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX IF NOT EXISTS console_login_links_expires_idx ON console_login_links (expires_at);

-- Console sessions, by the SHA-256 of the cookie's session id. A session
-- lives until idle_expires_at (moved on with each page) and never past
-- expires_at; ended_at ends it early (/logout).
CREATE TABLE IF NOT EXISTS console_sessions (
    id_hash         bytea       PRIMARY KEY CHECK (length(id_hash) = 32),
    identity        text        NOT NULL CHECK (identity <> ''),
    csrf            text        NOT NULL CHECK (csrf <> ''),
    created_at      timestamptz NOT NULL DEFAULT now(),
    seen_at         timestamptz NOT NULL DEFAULT now(),
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    ended_at        timestamptz
);
CREATE INDEX IF NOT EXISTS console_sessions_identity_idx ON console_sessions (identity) WHERE ended_at IS NULL;
CREATE INDEX IF NOT EXISTS console_sessions_expires_idx ON console_sessions (expires_at);

-- The console filters the audit log by who and what, newest first.
CREATE INDEX IF NOT EXISTS audit_log_actor_idx ON audit_log (actor, id);
CREATE INDEX IF NOT EXISTS audit_log_action_idx ON audit_log (action, id);

-- The console lists conversations by recency without an index on
-- sessions.updated_at: every stored message bumps it, and an index on it
-- would make each bump write index entries (see migration 17).

-- +goose Down
DROP INDEX IF EXISTS audit_log_action_idx;
DROP INDEX IF EXISTS audit_log_actor_idx;
DROP TABLE IF EXISTS console_sessions;
DROP TABLE IF EXISTS console_login_links;
