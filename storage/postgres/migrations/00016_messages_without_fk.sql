-- +goose Up

-- Every statement that stores messages writes their session's row in the
-- same statement or transaction (Append, AppendWindow and Insert bump
-- sessions.last_seq), so the foreign key's check never refused anything: it
-- only cost a lookup and a row lock on sessions for every message stored,
-- about a sixth of PostgreSQL's CPU per message in BenchmarkPipeline
-- (docs/benchmarks.md). Deleting a session still deletes its messages, by
-- this trigger instead of ON DELETE CASCADE.
ALTER TABLE messages DROP CONSTRAINT messages_session_key_fkey;

-- +goose StatementBegin
CREATE FUNCTION delete_session_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM messages WHERE session_key = OLD.key;
    RETURN OLD;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER sessions_delete_messages AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION delete_session_messages();

-- +goose Down
DROP TRIGGER sessions_delete_messages ON sessions;
DROP FUNCTION delete_session_messages();
DELETE FROM messages m WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.key = m.session_key);
ALTER TABLE messages ADD CONSTRAINT messages_session_key_fkey
    FOREIGN KEY (session_key) REFERENCES sessions (key) ON DELETE CASCADE;
