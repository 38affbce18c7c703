-- +goose Up
-- Every change to agent_docs notifies channel agent_docs, so a replica that
-- keeps context files in memory (DocsCache) hears that another one changed
-- them. One notice per statement: listeners drop everything they keep.
-- +goose StatementBegin
CREATE FUNCTION agent_docs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('agent_docs', '');
	RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER agent_docs_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON agent_docs
	FOR EACH STATEMENT EXECUTE FUNCTION agent_docs_notify();

-- +goose Down
DROP TRIGGER IF EXISTS agent_docs_notify ON agent_docs;
DROP FUNCTION IF EXISTS agent_docs_notify();
