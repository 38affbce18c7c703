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

-- One vote per person on a request that people decide with buttons (kind
-- names the feature: 'approval', 'grant_request'; subject_id is its row's
-- id): a person mapped to several identities (approvals.people) votes
-- once, whichever account presses. Votes go with their request: deleting
-- a request deletes its votes (the triggers below and in later migrations).
CREATE TABLE decision_votes (
    kind       text        NOT NULL CHECK (kind <> ''),
    subject_id text        NOT NULL CHECK (subject_id <> ''),
    person     text        NOT NULL CHECK (person <> ''),
    identity   text        NOT NULL CHECK (identity <> ''),
    choice     text        NOT NULL CHECK (choice IN ('allowed_once', 'allowed_always', 'approved', 'denied')),
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, subject_id, person)
);

-- +goose StatementBegin
CREATE FUNCTION delete_approval_votes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM decision_votes WHERE kind = 'approval' AND subject_id = OLD.id;
    RETURN OLD;
END $$;
-- +goose StatementEnd
CREATE TRIGGER approvals_delete_votes AFTER DELETE ON approvals
    FOR EACH ROW EXECUTE FUNCTION delete_approval_votes();

-- +goose Down
DROP TRIGGER approvals_delete_votes ON approvals;
DROP FUNCTION delete_approval_votes();
DROP TABLE decision_votes;
DROP INDEX approvals_escalation_due_idx;
ALTER TABLE approvals
    DROP COLUMN escalated_at,
    DROP COLUMN escalate_to,
    DROP COLUMN escalate_at,
    DROP COLUMN self_approve,
    DROP COLUMN approvers,
    DROP COLUMN quorum;
