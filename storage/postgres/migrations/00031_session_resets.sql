-- +goose Up

-- /reset: where each session's fresh start is. The model is shown only the
-- messages after after_seq (History.Load); those before are kept, for
-- /forget or retention to delete. One row per session: a later /reset
-- moves the mark forward, never back. A session deleted takes its mark.
CREATE TABLE IF NOT EXISTS session_resets (
    session_key text        PRIMARY KEY REFERENCES sessions (key) ON DELETE CASCADE,
    after_seq   bigint      NOT NULL CHECK (after_seq >= 0),
    reset_by    text        NOT NULL DEFAULT '',
    reset_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE IF EXISTS session_resets;
