-- +goose Up

-- Each job carries where its schedule stands, so a replica finds the jobs
-- due now with one indexed query instead of listing every job: last_slot is
-- the newest slot already handled (the catch-up policy looks after it),
-- next_due the first slot after it ('-infinity': not planned yet, e.g. a new
-- job or a changed schedule; NULL: never fires again). A config job removed
-- from the file is retired (retired_at) rather than deleted, so its run
-- history stays.
ALTER TABLE jobs
    ADD COLUMN last_slot  timestamptz,
    ADD COLUMN next_due   timestamptz DEFAULT '-infinity',
    ADD COLUMN retired_at timestamptz;

UPDATE jobs j SET last_slot = coalesce(
    (SELECT max(r.scheduled_at) FROM job_runs r WHERE r.job_id = j.id), j.created_at);

ALTER TABLE jobs ALTER COLUMN last_slot SET NOT NULL,
                 ALTER COLUMN last_slot SET DEFAULT now();

CREATE INDEX jobs_due_idx ON jobs (next_due) WHERE enabled AND retired_at IS NULL;

-- Whether a job has an open run is asked per job on every claim; this
-- answers it from the job's few open runs, not from all open runs.
CREATE INDEX job_runs_open_job_idx ON job_runs (job_id) WHERE status IN ('pending', 'running');

-- +goose Down
DROP INDEX job_runs_open_job_idx;
DROP INDEX jobs_due_idx;
ALTER TABLE jobs DROP COLUMN last_slot, DROP COLUMN next_due, DROP COLUMN retired_at;
