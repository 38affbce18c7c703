-- +goose Up

-- Which chats an attachment was sent in or made for (platform:chat_id), so
-- /forget finds a chat's documents, voice notes and files, not only the
-- pictures its messages reference. The same bytes in two chats are one
-- media row with two links; forgetting one chat removes its link, and the
-- content only when no other chat links or shows it. Attachments stored
-- before this table existed are linked to no chat: retention.media prunes
-- them.
CREATE TABLE IF NOT EXISTS media_chats (
    sha256 text NOT NULL REFERENCES media (sha256) ON DELETE CASCADE,
    chat   text NOT NULL CHECK (chat <> ''),
    PRIMARY KEY (sha256, chat)
);
CREATE INDEX IF NOT EXISTS media_chats_chat_idx ON media_chats (chat);

-- +goose Down
DROP TABLE IF EXISTS media_chats;
