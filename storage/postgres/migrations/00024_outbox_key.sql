-- +goose NO TRANSACTION
-- +goose Up

-- A row a tool queues (the file send_file, create_image or tts sends) is
-- named by its call: a call run again after a crash, between queueing the
-- row and storing the tool's result, finds the row there and queues
-- nothing. NULL for every other row. The index is built CONCURRENTLY, so
-- replicas still running keep writing replies meanwhile (as in 17), after
-- dropping what an interrupted run may have left half-built.
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS dedupe_key text;
DROP INDEX CONCURRENTLY IF EXISTS outbox_dedupe_key;
CREATE UNIQUE INDEX CONCURRENTLY outbox_dedupe_key ON outbox (dedupe_key) WHERE dedupe_key IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS outbox_dedupe_key;
ALTER TABLE outbox DROP COLUMN IF EXISTS dedupe_key;
