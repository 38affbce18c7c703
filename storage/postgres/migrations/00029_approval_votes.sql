-- +goose Up

-- The rule an approval was asked under (approvals.rules), resolved when it
-- was created so that every replica and restart decides it the same way:
-- how many distinct people must allow, who may vote (empty: the
-- configured approvals.approvers, as for requests made before rules), whether
-- the requester's own vote counts, and when and to whom it escalates.
ALTER TABLE approvals
    ADD COLUMN quorum       int         NOT NULL DEFAULT 1 CHECK (quorum >= 1),
    ADD COLUMN approvers    text[]      NOT NULL DEFAULT '{}',
    ADD COLUMN self_approve boolean     NOT NULL DEFAULT true,
    ADD COLUMN escalate_at  timestamptz,
    ADD COLUMN escalate_to  text[]      NOT NULL DEFAULT '{}',
    ADD COLUMN escalated_at timestamptz;

CREATE INDEX approvals_escalation_due_idx ON approvals (escalate_at)
    WHERE status = 'pending' AND escalated_at IS NULL AND escalate_at IS NOT NULL;

-- One vote per person on an approval: a person mapped to several
-- identities (approvals.people) votes once, whichever account presses.
CREATE TABLE approval_votes (
    approval_id text        NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
    person      text        NOT NULL CHECK (person <> ''),
    identity    text        NOT NULL CHECK (identity <> ''),
    choice      text        NOT NULL CHECK (choice IN ('allowed_once', 'allowed_always', 'denied')),
    at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (approval_id, person)
);

-- +goose Down
DROP TABLE approval_votes;
DROP INDEX approvals_escalation_due_idx;
ALTER TABLE approvals
    DROP COLUMN escalated_at,
    DROP COLUMN escalate_to,
    DROP COLUMN escalate_at,
    DROP COLUMN self_approve,
    DROP COLUMN approvers,
    DROP COLUMN quorum;
