-- +goose NO TRANSACTION
-- +goose Up

-- Every stored message bumps its session's last_seq and updated_at. With
-- updated_at in sessions_agent_idx, each bump was a full (non-HOT) update:
-- a new entry in both of the table's indexes, twice per message. Keyed by
-- agent alone, and with room left on each page, the bump is a heap-only
-- (HOT) update that touches no index. Listing an agent's sessions by
-- updated_at sorts that agent's rows instead.
--
-- Only pending outbox rows are ever looked up by status: index those alone,
-- so a row marked sent or failed leaves no entry behind, and a claim (which
-- changes no indexed column) is a HOT update.
--
-- The indexes are built CONCURRENTLY, outside a transaction, so replicas
-- still running keep writing sessions and outbox rows meanwhile (the outbox
-- keeps every row it delivered and can be large). Each CREATE first drops
-- what an interrupted run may have left half-built.
DROP INDEX CONCURRENTLY IF EXISTS sessions_by_agent_idx;
CREATE INDEX CONCURRENTLY sessions_by_agent_idx ON sessions (agent);
DROP INDEX CONCURRENTLY IF EXISTS sessions_agent_idx;
ALTER TABLE sessions SET (fillfactor = 70);
DROP INDEX CONCURRENTLY IF EXISTS outbox_pending_due_idx;
CREATE INDEX CONCURRENTLY outbox_pending_due_idx ON outbox (next_attempt_at) WHERE status = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS outbox_status_next_attempt_idx;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_status_next_attempt_idx ON outbox (status, next_attempt_at);
DROP INDEX CONCURRENTLY IF EXISTS outbox_pending_due_idx;
ALTER TABLE sessions RESET (fillfactor);
CREATE INDEX CONCURRENTLY IF NOT EXISTS sessions_agent_idx ON sessions (agent, updated_at);
DROP INDEX CONCURRENTLY IF EXISTS sessions_by_agent_idx;
