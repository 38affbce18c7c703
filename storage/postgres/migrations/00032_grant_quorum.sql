-- +goose Up

-- The rule a grant request was asked under (approvals.rules matched on
-- the MCP tool), resolved when it was opened so that every replica and
-- restart decides it the same way: how many distinct people must approve,
-- who may vote (empty: the admins, as for requests made before rules), and
-- whether the subject person's own vote counts. Votes are decision_votes
-- of kind 'grant_request'.
ALTER TABLE grant_requests
    ADD COLUMN quorum       int     NOT NULL DEFAULT 1 CHECK (quorum >= 1),
    ADD COLUMN approvers    text[]  NOT NULL DEFAULT '{}',
    ADD COLUMN self_approve boolean NOT NULL DEFAULT true;

-- +goose StatementBegin
CREATE FUNCTION delete_grant_request_votes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM decision_votes WHERE kind = 'grant_request' AND subject_id = OLD.id;
    RETURN OLD;
END $$;
-- +goose StatementEnd
CREATE TRIGGER grant_requests_delete_votes AFTER DELETE ON grant_requests
    FOR EACH ROW EXECUTE FUNCTION delete_grant_request_votes();

-- +goose Down
DROP TRIGGER grant_requests_delete_votes ON grant_requests;
DROP FUNCTION delete_grant_request_votes();
DELETE FROM decision_votes WHERE kind = 'grant_request';
ALTER TABLE grant_requests
    DROP COLUMN self_approve,
    DROP COLUMN approvers,
    DROP COLUMN quorum;
