-- +goose Up

-- The model an admin switched a chat to with /model (a name among the
-- configured models); no row: the agent's own model. Every run reads its
-- chat's row, so a switch holds on every replica at once.
CREATE TABLE IF NOT EXISTS chat_models (
    chat       text        PRIMARY KEY,
    model      text        NOT NULL,
    set_by     text        NOT NULL,
    set_at     timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE IF EXISTS chat_models;
