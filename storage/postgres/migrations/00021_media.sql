-- +goose Up

-- Attachments people sent, content-addressed: the key is the hex SHA-256
-- of the bytes, which live in a large object (streamed in and out, never
-- whole in memory). The file's name is not kept: the same bytes sent under
-- two names are one row.
CREATE TABLE media (
    sha256     text        PRIMARY KEY,
    oid        oid         NOT NULL,
    type       text        NOT NULL,
    size       bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX media_created_idx ON media (created_at);

-- A large object is not removed with the row that names it; this trigger
-- unlinks it, so that no delete (prune, or by hand) leaves its bytes
-- behind.
-- +goose StatementBegin
CREATE FUNCTION media_unlink() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lo_unlink(OLD.oid);
    RETURN OLD;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER media_unlink AFTER DELETE ON media
    FOR EACH ROW EXECUTE FUNCTION media_unlink();

-- +goose Down
DROP TABLE media;
DROP FUNCTION media_unlink();
