-- +goose Up

-- A row that sends a file (a photo, a voice message, a document) names it
-- here, by the media row's sha256, with the kind, name, type and size the
-- chat is shown; text is then its caption. NULL for a text message. The
-- bytes stay in media, so a row is small however large its file.
ALTER TABLE outbox ADD COLUMN file jsonb;

-- +goose Down
ALTER TABLE outbox DROP COLUMN file;
