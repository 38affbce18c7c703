-- +goose Up

-- Runs park while an approval is pending instead of holding a worker; the
-- decision resumes them. A person may withdraw their own request
-- ('cancelled'). An "Allow once" authorizes exactly one execution:
-- consumed_at records it, and a repeat of the same step asks again, so the
-- one-approval-per-(session, tool call) rule holds only among unconsumed ones.
ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN ('pending', 'allowed_once', 'allowed_always', 'denied', 'expired', 'cancelled'));
ALTER TABLE approvals ADD COLUMN consumed_at timestamptz;
ALTER TABLE approvals DROP CONSTRAINT approvals_session_key_tool_call_id_key;
CREATE UNIQUE INDEX approvals_session_call_open_key
    ON approvals (session_key, tool_call_id)
    WHERE consumed_at IS NULL;
CREATE INDEX approvals_pending_session_idx ON approvals (session_key) WHERE status = 'pending';
CREATE INDEX approvals_pending_expiry_idx ON approvals (expires_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX approvals_pending_expiry_idx;
DROP INDEX approvals_pending_session_idx;
DROP INDEX approvals_session_call_open_key;
DELETE FROM approvals WHERE consumed_at IS NOT NULL
    AND (session_key, tool_call_id) IN (SELECT session_key, tool_call_id FROM approvals WHERE consumed_at IS NULL);
ALTER TABLE approvals ADD CONSTRAINT approvals_session_key_tool_call_id_key UNIQUE (session_key, tool_call_id);
ALTER TABLE approvals DROP COLUMN consumed_at;
UPDATE approvals SET status = 'denied' WHERE status = 'cancelled';
ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN ('pending', 'allowed_once', 'allowed_always', 'denied', 'expired'));
