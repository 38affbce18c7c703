-- +goose Up

-- MCP servers added at run time (admin API); the config's live in the file.
-- env and headers hold values sealed with the secrets key (base64).
CREATE TABLE mcp_servers (
    name         text        PRIMARY KEY,
    transport    text        NOT NULL CHECK (transport IN ('stdio', 'sse', 'http')),
    command      text[]      NOT NULL DEFAULT '{}',
    url          text        NOT NULL DEFAULT '',
    env          jsonb       NOT NULL DEFAULT '{}',
    headers      jsonb       NOT NULL DEFAULT '{}',
    allow        text[]      NOT NULL DEFAULT '{}',
    deny         text[]      NOT NULL DEFAULT '{}',
    grant_agents text[]      NOT NULL DEFAULT '{}',
    grant_users  text[]      NOT NULL DEFAULT '{}',
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE mcp_servers;
