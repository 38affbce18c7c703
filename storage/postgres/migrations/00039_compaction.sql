-- +goose Up

-- The summaries of long sessions (agent.compaction): the model's summary
-- of a session's visible messages from_seq..to_seq, sent to later model
-- calls in their place. Each summary takes in the one before, so only the
-- newest after a session's /reset mark is read; one row is written in one
-- statement, so a crash mid-compaction leaves the last complete summary.
CREATE TABLE IF NOT EXISTS session_summaries (
    session_key text        NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    to_seq      bigint      NOT NULL,
    from_seq    bigint      NOT NULL,
    content     text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_key, to_seq)
);

-- +goose Down
DROP TABLE IF EXISTS session_summaries;
