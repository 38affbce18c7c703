-- +goose Up

-- The live messages that show an answer while the model writes it
-- (bot/stream), per session: a run that dies mid-answer leaves them here,
-- and the session's next run takes them over, so the chat never keeps a
-- half-written answer. A reply row that replaces them (outbox.replaces)
-- deletes its session's row in the same transaction (the trigger below),
-- whichever statement wrote the reply, so a later answer never takes over
-- messages that already show an earlier one.
CREATE TABLE IF NOT EXISTS live_answers (
    session_key text        PRIMARY KEY,
    platform    text        NOT NULL,
    chat_id     text        NOT NULL,
    thread_id   text        NOT NULL DEFAULT '',
    message_ids text[]      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The live messages a reply is delivered in place of (FinishLive); NULL
-- for a message sent as new.
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS replaces text[];

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION live_answer_replaced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM live_answers WHERE session_key = NEW.session_key;
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP TRIGGER IF EXISTS outbox_replaces_live_answer ON outbox;
CREATE TRIGGER outbox_replaces_live_answer AFTER INSERT ON outbox
    FOR EACH ROW WHEN (NEW.replaces IS NOT NULL AND NEW.session_key IS NOT NULL)
    EXECUTE FUNCTION live_answer_replaced();

-- +goose Down
DROP TRIGGER IF EXISTS outbox_replaces_live_answer ON outbox;
DROP FUNCTION IF EXISTS live_answer_replaced();
ALTER TABLE outbox DROP COLUMN IF EXISTS replaces;
DROP TABLE IF EXISTS live_answers;
