-- +goose Up

-- Context files (SOUL.md, USER.md…) and memory documents (MEMORY.md,
-- memory/*.md) the fs tools route to the database: per agent, in a scope
-- ('' for the agent itself, 'user:<identity>', 'chat:<address>').
CREATE TABLE agent_docs (
    agent      text        NOT NULL,
    scope      text        NOT NULL DEFAULT '',
    path       text        NOT NULL,
    content    text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    tsv        tsvector    GENERATED ALWAYS AS (to_tsvector('english', replace(path, '/', ' ') || ' ' || content)) STORED,
    PRIMARY KEY (agent, scope, path)
);
CREATE INDEX agent_docs_tsv_idx ON agent_docs USING gin (tsv);

-- +goose Down
DROP TABLE agent_docs;
