-- +goose Up

-- Agent prompts run on a schedule, their replies posted to a chat.
CREATE TABLE jobs (
    id          bigserial   PRIMARY KEY,
    name        text        NOT NULL UNIQUE CHECK (name <> ''),
    schedule    text        NOT NULL CHECK (schedule <> ''),
    timezone    text        NOT NULL DEFAULT '',
    agent       text        NOT NULL DEFAULT '',
    prompt      text        NOT NULL,
    platform    text        NOT NULL CHECK (platform <> ''),
    chat_id     text        NOT NULL CHECK (chat_id <> ''),
    thread_id   text        NOT NULL DEFAULT '',
    enabled     boolean     NOT NULL DEFAULT true,
    overlap     text        NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'queue')),
    catch_up    text        NOT NULL DEFAULT 'last' CHECK (catch_up IN ('none', 'last')),
    created_by  text        NOT NULL DEFAULT '',
    source      text        NOT NULL DEFAULT 'chat',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per slot of a job: the unique key is what makes a slot run once
-- across replicas. lease_owner/lease_until say which replica runs it and
-- until when; for a pending run lease_until is when its retry is due.
CREATE TABLE job_runs (
    id           bigserial   PRIMARY KEY,
    job_id       bigint      NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    scheduled_at timestamptz NOT NULL,
    status       text        NOT NULL
                             CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'skipped')),
    lease_owner  text        NOT NULL DEFAULT '',
    lease_until  timestamptz,
    attempts     integer     NOT NULL DEFAULT 0,
    started_at   timestamptz,
    finished_at  timestamptz,
    tokens_in    bigint      NOT NULL DEFAULT 0,
    tokens_out   bigint      NOT NULL DEFAULT 0,
    error        text        NOT NULL DEFAULT '',
    UNIQUE (job_id, scheduled_at)
);

CREATE INDEX job_runs_open_idx ON job_runs (lease_until) WHERE status IN ('pending', 'running');

-- +goose Down
DROP TABLE job_runs;
DROP TABLE jobs;
