-- +goose Up

-- The questions agents ask people with ask_user. A run waiting for an
-- answer is parked, like one waiting for an approval: recovery leaves a
-- session with a pending question alone, and the answer (a press, or a
-- message typed by the person asked) resumes it. One question per
-- (session, tool call), so the call made again on resume finds its own.
-- answer_external_id is the platform id of the message typed as the
-- answer: a redelivery of that message is known and not stored as a
-- message of the session.
CREATE TABLE IF NOT EXISTS questions (
    id                 text PRIMARY KEY,
    session_key        text NOT NULL,
    tool_call_id       text NOT NULL,
    agent              text NOT NULL DEFAULT '',
    asker              text NOT NULL,
    platform           text NOT NULL,
    chat_id            text NOT NULL,
    thread_id          text NOT NULL DEFAULT '',
    question           text NOT NULL,
    options            text[] NOT NULL DEFAULT '{}',
    status             text NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'answered', 'expired', 'cancelled')),
    answer             text NOT NULL DEFAULT '',
    answered_by        text NOT NULL DEFAULT '',
    answer_kind        text NOT NULL DEFAULT '' CHECK (answer_kind IN ('', 'pressed', 'typed')),
    answer_external_id text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz NOT NULL,
    answered_at        timestamptz,
    UNIQUE (session_key, tool_call_id)
);
-- Recovery's NOT EXISTS and the typed-answer lookup of every chat message.
CREATE INDEX IF NOT EXISTS questions_pending_session_idx ON questions (session_key, asker) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS questions_pending_expiry_idx ON questions (expires_at) WHERE status = 'pending';
-- retention.messages prunes settled questions by age.
CREATE INDEX IF NOT EXISTS questions_settled_age_idx ON questions (created_at) WHERE status <> 'pending';
CREATE UNIQUE INDEX IF NOT EXISTS questions_answer_message_key ON questions (session_key, answer_external_id)
    WHERE answer_external_id IS NOT NULL;

-- +goose Down
DROP TABLE IF EXISTS questions;
