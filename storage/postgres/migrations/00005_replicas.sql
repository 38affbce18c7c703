-- +goose Up

-- Every dispatcher says it is alive here about once a second. Outbox rows
-- claimed by an owner that stopped saying so (a replica that crashed, or
-- this process before a restart) are in doubt: they are claimed again at
-- once instead of after their lease.
CREATE TABLE replicas (
    owner   text        PRIMARY KEY,
    seen_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE replicas;
