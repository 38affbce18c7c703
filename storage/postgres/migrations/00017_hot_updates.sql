-- +goose Up

-- Every stored message bumps its session's last_seq and updated_at. With
-- updated_at in sessions_agent_idx, each bump was a full (non-HOT) update:
-- a new entry in both of the table's indexes, twice per message. Keyed by
-- agent alone, and with room left on each page, the bump is a heap-only
-- (HOT) update that touches no index. Listing an agent's sessions by
-- updated_at sorts that agent's rows instead.
DROP INDEX sessions_agent_idx;
CREATE INDEX sessions_agent_idx ON sessions (agent);
ALTER TABLE sessions SET (fillfactor = 70);

-- Only pending rows are ever looked up by status: index those alone, so a
-- row marked sent or failed leaves no entry behind, and a claim (which
-- changes no indexed column) is a HOT update.
DROP INDEX outbox_status_next_attempt_idx;
CREATE INDEX outbox_pending_due_idx ON outbox (next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX outbox_pending_due_idx;
CREATE INDEX outbox_status_next_attempt_idx ON outbox (status, next_attempt_at);
ALTER TABLE sessions RESET (fillfactor);
DROP INDEX sessions_agent_idx;
CREATE INDEX sessions_agent_idx ON sessions (agent, updated_at);
