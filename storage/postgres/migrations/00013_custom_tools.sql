-- +goose Up

-- Custom tools defined at run time (admin API, /tools add). env holds each
-- variable's value sealed with AES-256-GCM under the secrets key (base64),
-- never the plaintext.
CREATE TABLE custom_tools (
    name        text        PRIMARY KEY,
    description text        NOT NULL DEFAULT '',
    parameters  jsonb       NOT NULL,
    command     text        NOT NULL,
    timeout_ms  bigint      NOT NULL DEFAULT 0,
    env         jsonb       NOT NULL DEFAULT '{}',
    created_by  text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE custom_tools;
