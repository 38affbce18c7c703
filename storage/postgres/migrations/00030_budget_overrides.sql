-- +goose Up

-- A budget used up in a period (budget: scope/per/unit, e.g. user/day/tokens;
-- subject: whose spending, e.g. telegram:42; period_start: the UTC start of
-- the period). One row per budget, subject and period, so the admins are
-- asked once: pending until an admin presses Allow once more (allowed: one
-- more period's limit, this period only) or Keep limit (kept). chat is
-- where the refused person wrote, to tell them an admin allowed more.
CREATE TABLE IF NOT EXISTS budget_overrides (
    id           text        PRIMARY KEY,
    budget       text        NOT NULL,
    subject      text        NOT NULL,
    period_start timestamptz NOT NULL,
    period_end   timestamptz NOT NULL,
    used         bigint      NOT NULL CHECK (used >= 0),
    budget_limit bigint      NOT NULL CHECK (budget_limit > 0),
    chat         text        NOT NULL DEFAULT '',
    thread_id    text        NOT NULL DEFAULT '',
    status       text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'allowed', 'kept')),
    decided_by   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    UNIQUE (budget, subject, period_start)
);

-- +goose Down
DROP TABLE IF EXISTS budget_overrides;
