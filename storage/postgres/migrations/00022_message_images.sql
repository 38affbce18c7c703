-- +goose Up

-- The pictures a user message carries, by reference to the media table:
-- [{"sha256": "…", "type": "image/png"}, …]. Only the keys are kept, never
-- the bytes, which a request to a model with vision loads from media when
-- it is built. NULL when the message has none; adding a nullable column
-- without a default rewrites no rows.
ALTER TABLE messages ADD COLUMN images jsonb;

-- +goose Down
ALTER TABLE messages DROP COLUMN images;
