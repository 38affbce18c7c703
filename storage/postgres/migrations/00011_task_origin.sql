-- +goose Up

-- The conversation a task was created for (a chat address), and whether its
-- outcome was reported to the team's lead in that conversation yet: when
-- the last open task of a conversation closes, the lead gets every
-- unreported outcome in one message.
ALTER TABLE team_tasks
    ADD COLUMN origin   text    NOT NULL DEFAULT '',
    ADD COLUMN reported boolean NOT NULL DEFAULT false;
CREATE INDEX team_tasks_origin_idx ON team_tasks (team, origin) WHERE NOT reported;

-- +goose Down
DROP INDEX team_tasks_origin_idx;
ALTER TABLE team_tasks DROP COLUMN reported, DROP COLUMN origin;
