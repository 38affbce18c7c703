-- +goose Up

-- A row written already claimed (handed to the writer's dispatcher in
-- memory) must not overtake a pending row of the same chat that someone
-- else holds or nobody holds yet: the write looks for one here.
CREATE INDEX outbox_pending_chat_idx ON outbox (platform, chat_id) WHERE status = 'pending';

-- +goose Down
DROP INDEX outbox_pending_chat_idx;
