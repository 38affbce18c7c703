-- +goose NO TRANSACTION
-- +goose Up

-- Writing a reply looks for a pending row of the same chat (see
-- outbox_pending_chat_idx). outbox_pending_due_idx had the same predicate
-- (status = 'pending'), so that probe could use it too, and PostgreSQL
-- did whenever its statistics saw few pending rows (after a VACUUM on a
-- quiet table, say): the cached plan then walked every pending entry,
-- live and dead, to find one chat's, three times per reply. Under load
-- that was 150 buffers per reply instead of 30.
--
-- The due index now also says next_attempt_at IS NOT NULL. The column is
-- NOT NULL, so it holds the same entries; but only a query that compares
-- next_attempt_at (the dispatcher's poll for due rows) implies that
-- predicate, so the chat probe can use outbox_pending_chat_idx alone.
--
-- Built CONCURRENTLY, outside a transaction, before the old index goes,
-- so running replicas keep their poll's index throughout (as in 17).
DROP INDEX CONCURRENTLY IF EXISTS outbox_due_idx;
CREATE INDEX CONCURRENTLY outbox_due_idx ON outbox (next_attempt_at)
	WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS outbox_pending_due_idx;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_pending_due_idx ON outbox (next_attempt_at) WHERE status = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS outbox_due_idx;
