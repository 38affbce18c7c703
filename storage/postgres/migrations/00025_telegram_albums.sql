-- +goose Up

-- The parts of albums Telegram posts to the webhook, kept until the album
-- is handed over as one message. A part is answered 200 once stored here,
-- so any replica can finish an album another one began or died holding.
-- Handed-over parts are kept a while (pruned after two days) so that a
-- part Telegram posts again is known and is not a new album.
CREATE TABLE IF NOT EXISTS telegram_albums (
    chat_id       bigint      NOT NULL,
    media_group   text        NOT NULL,
    last_part_at  timestamptz NOT NULL DEFAULT now(),
    claimed_by    text,
    claimed_until timestamptz,
    handed_at     timestamptz,
    PRIMARY KEY (chat_id, media_group)
);
CREATE INDEX IF NOT EXISTS telegram_albums_open ON telegram_albums (last_part_at) WHERE handed_at IS NULL;

CREATE TABLE IF NOT EXISTS telegram_album_parts (
    chat_id     bigint  NOT NULL,
    media_group text    NOT NULL,
    update_id   bigint  NOT NULL,
    body        bytea   NOT NULL,
    handed      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (chat_id, media_group, update_id),
    FOREIGN KEY (chat_id, media_group) REFERENCES telegram_albums ON DELETE CASCADE
);

-- +goose Down
DROP TABLE IF EXISTS telegram_album_parts;
DROP TABLE IF EXISTS telegram_albums;
