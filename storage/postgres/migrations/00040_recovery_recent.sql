-- +goose NO TRANSACTION
-- +goose Up

-- Recovery's periodic passes look only at the sessions something happened
-- to lately: a message stored, an approval decided, a question answered.
-- These indexes find those by time, so a pass reads about as many entries
-- as there was activity in its window, however many sessions and messages
-- are stored. Messages are only ever appended at the right edge of this
-- index (created_at is never changed), so it costs an insert little.
--
-- Sessions get no index on updated_at: every stored message bumps it, and
-- an indexed column would turn that heap-only (HOT) update into a full one
-- (see 00017).
--
-- Built CONCURRENTLY, outside a transaction, so replicas still running keep
-- writing meanwhile; each CREATE first drops what an interrupted run may
-- have left half-built.
DROP INDEX CONCURRENTLY IF EXISTS messages_created_idx;
CREATE INDEX CONCURRENTLY messages_created_idx ON messages (created_at);
DROP INDEX CONCURRENTLY IF EXISTS approvals_decided_idx;
CREATE INDEX CONCURRENTLY approvals_decided_idx ON approvals (decided_at) WHERE decided_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS questions_answered_idx;
CREATE INDEX CONCURRENTLY questions_answered_idx ON questions (answered_at) WHERE answered_at IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS questions_answered_idx;
DROP INDEX CONCURRENTLY IF EXISTS approvals_decided_idx;
DROP INDEX CONCURRENTLY IF EXISTS messages_created_idx;
