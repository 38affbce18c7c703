-- +goose Up

-- Each team's task board. A task waits (blocked) until every task in
-- blocked_by is completed; claiming is one conditional UPDATE, so of many
-- claimers exactly one wins.
CREATE TABLE team_tasks (
    id            bigserial PRIMARY KEY,
    team          text        NOT NULL,
    subject       text        NOT NULL,
    description   text        NOT NULL DEFAULT '',
    priority      integer     NOT NULL DEFAULT 0,
    status        text        NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'blocked', 'in_progress', 'completed', 'cancelled', 'failed')),
    blocked_by    bigint[]    NOT NULL DEFAULT '{}',
    assignee      text        NOT NULL DEFAULT '',
    owner         text        NOT NULL DEFAULT '',
    created_by    text        NOT NULL,
    result        text        NOT NULL DEFAULT '',
    progress      integer     NOT NULL DEFAULT 0,
    progress_note text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    tsv           tsvector    GENERATED ALWAYS AS (to_tsvector('english', subject || ' ' || description)) STORED
);
CREATE INDEX team_tasks_board_idx ON team_tasks (team, status, priority DESC, created_at DESC);
CREATE INDEX team_tasks_blocked_by_idx ON team_tasks USING gin (blocked_by);
CREATE INDEX team_tasks_tsv_idx ON team_tasks USING gin (tsv);

CREATE TABLE team_task_comments (
    id         bigserial PRIMARY KEY,
    task_id    bigint      NOT NULL REFERENCES team_tasks (id) ON DELETE CASCADE,
    author     text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('note', 'blocker')),
    text       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX team_task_comments_task_idx ON team_task_comments (task_id, id);

-- +goose Down
DROP TABLE team_task_comments;
DROP TABLE team_tasks;
