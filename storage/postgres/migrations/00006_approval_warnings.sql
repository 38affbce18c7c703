-- +goose Up

-- Why the exec guard flagged a command as dangerous (installs a crontab,
-- LD_PRELOAD…): shown in every message about the approval, and such an
-- approval offers no "Always allow".
ALTER TABLE approvals ADD COLUMN warnings text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE approvals DROP COLUMN warnings;
