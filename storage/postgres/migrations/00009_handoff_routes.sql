-- +goose Up

-- The durable copy of handoff routes (Redis holds the fast one): who
-- answers a chat instead of its binding's agent, until it expires.
CREATE TABLE handoff_routes (
    address    text PRIMARY KEY,
    agent      text        NOT NULL,
    from_agent text        NOT NULL DEFAULT '',
    reason     text        NOT NULL DEFAULT '',
    set_by     text        NOT NULL DEFAULT '',
    set_at     timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE handoff_routes;
