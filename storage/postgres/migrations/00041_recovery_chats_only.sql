-- +goose NO TRANSACTION
-- +goose Up

-- Recovery answers chats; a job's runs are the scheduler's to take over
-- (job_runs leases), so recovery never acts on a job's session
-- ("<agent>/job:<name>", or a subagent's working for one). At 10 000 jobs
-- a minute those sessions write 20 000 messages a minute, which the time
-- index of 00040 held for every pass to read and then pass over: the
-- index now leaves them out. The predicate is recovery.go's
-- recoveredSession, word for word, so the planner can use the index.
DROP INDEX CONCURRENTLY IF EXISTS messages_created_chat_idx;
CREATE INDEX CONCURRENTLY messages_created_chat_idx ON messages (created_at) WHERE session_key NOT LIKE '%/job:%';
DROP INDEX CONCURRENTLY IF EXISTS messages_created_idx;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS messages_created_idx;
CREATE INDEX CONCURRENTLY messages_created_idx ON messages (created_at);
DROP INDEX CONCURRENTLY IF EXISTS messages_created_chat_idx;
