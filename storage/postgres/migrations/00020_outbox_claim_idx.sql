-- +goose NO TRANSACTION
-- +goose Up

-- The dispatcher claims due pending rows oldest first (ORDER BY id LIMIT
-- a batch). With the due rows indexed by next_attempt_at, PostgreSQL could
-- not stop at the batch: it fetched every due row and sorted them, or,
-- once the table was analyzed while a backlog was due, it walked the
-- primary key from the oldest row, through every row already sent (a
-- week of them are kept), to the first pending one: 18 000 buffers and
-- 8 ms for each batch of 100 with a backlog of 30 000 behind 19 000 sent
-- rows. Indexed by id, with next_attempt_at beside it to be checked in the
-- index, the claim reads the pending rows in the order it wants and stops
-- after the batch: 110 to 280 buffers, 0.1 ms (docs/benchmarks.md,
-- twenty-second round).
--
-- It keeps the predicate of 19's index, next_attempt_at IS NOT NULL, so
-- that only a query comparing next_attempt_at uses it and the chat probe
-- of a reply keeps to outbox_pending_chat_idx.
--
-- Built CONCURRENTLY, outside a transaction, before the old index goes,
-- so running replicas keep an index for their claims throughout (as in 19);
-- dropped first should an interrupted run have left it invalid.
DROP INDEX CONCURRENTLY IF EXISTS outbox_claim_idx;
CREATE INDEX CONCURRENTLY outbox_claim_idx ON outbox (id, next_attempt_at)
	WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS outbox_due_idx;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_due_idx ON outbox (next_attempt_at)
	WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS outbox_claim_idx;
