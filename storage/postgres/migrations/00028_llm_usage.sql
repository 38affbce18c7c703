-- +goose Up

-- Every model call's tokens, for /usage, the usage API and budgets: who
-- started the run (identity, platform:user_id; '' for none), in which chat
-- (platform:chat_id), for which agent, model and scheduled job ('' when
-- the run was not a job's). input_tokens exclude the cached ones, which are
-- counted apart (agentcore.Usage). cost_microdollars is the cost at the
-- prices in force when the call was made; NULL when the model had no price.
CREATE TABLE IF NOT EXISTS llm_usage (
    id                 bigserial   PRIMARY KEY,
    at                 timestamptz NOT NULL DEFAULT now(),
    identity           text        NOT NULL DEFAULT '',
    chat               text        NOT NULL DEFAULT '',
    agent              text        NOT NULL DEFAULT '',
    model              text        NOT NULL DEFAULT '',
    job                text        NOT NULL DEFAULT '',
    session_key        text        NOT NULL DEFAULT '',
    input_tokens       bigint      NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens      bigint      NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    cache_read_tokens  bigint      NOT NULL DEFAULT 0 CHECK (cache_read_tokens >= 0),
    cache_write_tokens bigint      NOT NULL DEFAULT 0 CHECK (cache_write_tokens >= 0),
    cost_microdollars  bigint      CHECK (cost_microdollars >= 0)
);

-- Sums per budget scope and period, and the usage API's time windows.
CREATE INDEX IF NOT EXISTS llm_usage_at_idx ON llm_usage (at);
CREATE INDEX IF NOT EXISTS llm_usage_identity_at_idx ON llm_usage (identity, at);
CREATE INDEX IF NOT EXISTS llm_usage_chat_at_idx ON llm_usage (chat, at);
CREATE INDEX IF NOT EXISTS llm_usage_agent_at_idx ON llm_usage (agent, at);
CREATE INDEX IF NOT EXISTS llm_usage_job_at_idx ON llm_usage (job, at) WHERE job <> '';

-- +goose Down
DROP TABLE IF EXISTS llm_usage;
