-- +goose Up

-- The knowledge graph: entities and relations extracted from memory
-- documents (MEMORY.md, memory.md, memory/*.md), each fact kept with the
-- document it came from, so re-extracting a document replaces exactly its
-- facts and deleting it (PutDoc with empty content, /forget) removes them
-- in the same transaction (ON DELETE CASCADE). An entity's key is its
-- normalized name (NFKC, lower case, whitespace collapsed): the same key in
-- two documents of the call's scopes is one node of the graph.
CREATE TABLE knowledge_entities (
    agent text NOT NULL,
    scope text NOT NULL,
    path  text NOT NULL,
    key   text NOT NULL CHECK (key <> ''),
    name  text NOT NULL,
    type  text NOT NULL DEFAULT '',
    PRIMARY KEY (agent, scope, path, key),
    FOREIGN KEY (agent, scope, path) REFERENCES agent_docs (agent, scope, path) ON DELETE CASCADE
);
CREATE INDEX knowledge_entities_key_idx ON knowledge_entities (agent, key, scope);

CREATE TABLE knowledge_relations (
    agent    text NOT NULL,
    scope    text NOT NULL,
    path     text NOT NULL,
    from_key text NOT NULL,
    to_key   text NOT NULL,
    type     text NOT NULL CHECK (type <> ''),
    PRIMARY KEY (agent, scope, path, from_key, type, to_key),
    FOREIGN KEY (agent, scope, path, from_key) REFERENCES knowledge_entities (agent, scope, path, key) ON DELETE CASCADE,
    FOREIGN KEY (agent, scope, path, to_key) REFERENCES knowledge_entities (agent, scope, path, key) ON DELETE CASCADE
);
CREATE INDEX knowledge_relations_from_idx ON knowledge_relations (agent, from_key, scope);
CREATE INDEX knowledge_relations_to_idx ON knowledge_relations (agent, to_key, scope);

-- The extraction queue: one row per memory document written or changed
-- since its facts were last extracted, written by the triggers below in the
-- write's own transaction, so no write path can forget it and a crash loses
-- none. A newer write of the same document replaces the row (coalescing)
-- with a new generation from knowledge_job_generation; a worker finishes
-- only the generation it claimed. next_at is when the row is due: a claim
-- moves it one lease ahead, a failure one backoff ahead. A row whose
-- attempts reached the worker's limit stays, unclaimed, with its last
-- error, until the document changes again.
CREATE SEQUENCE knowledge_job_generation;
CREATE TABLE knowledge_jobs (
    agent        text        NOT NULL,
    scope        text        NOT NULL,
    path         text        NOT NULL,
    content_hash text        NOT NULL,
    generation   bigint      NOT NULL DEFAULT nextval('knowledge_job_generation'),
    attempts     int         NOT NULL DEFAULT 0,
    next_at      timestamptz NOT NULL DEFAULT now(),
    last_error   text        NOT NULL DEFAULT '',
    PRIMARY KEY (agent, scope, path)
);
CREATE INDEX knowledge_jobs_due_idx ON knowledge_jobs (next_at);

-- The memory paths, as tools.IsMemoryPath decides them.
-- +goose StatementBegin
CREATE FUNCTION knowledge_is_memory_path(p text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT p IN ('MEMORY.md', 'memory.md') OR (left(p, 7) = 'memory/' AND right(p, 3) = '.md')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION knowledge_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		-- The facts go by cascade; nothing is left to extract.
		DELETE FROM knowledge_jobs WHERE agent = OLD.agent AND scope = OLD.scope AND path = OLD.path;
		RETURN NULL;
	END IF;
	INSERT INTO knowledge_jobs (agent, scope, path, content_hash)
	VALUES (NEW.agent, NEW.scope, NEW.path, md5(NEW.content))
	ON CONFLICT (agent, scope, path) DO UPDATE SET
		content_hash = EXCLUDED.content_hash, generation = EXCLUDED.generation,
		attempts = 0, next_at = now(), last_error = '';
	RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER knowledge_enqueue_insert AFTER INSERT ON agent_docs
    FOR EACH ROW WHEN (knowledge_is_memory_path(NEW.path)) EXECUTE FUNCTION knowledge_enqueue();
CREATE TRIGGER knowledge_enqueue_update AFTER UPDATE OF content ON agent_docs
    FOR EACH ROW WHEN (knowledge_is_memory_path(NEW.path) AND OLD.content IS DISTINCT FROM NEW.content)
    EXECUTE FUNCTION knowledge_enqueue();
CREATE TRIGGER knowledge_enqueue_delete AFTER DELETE ON agent_docs
    FOR EACH ROW WHEN (knowledge_is_memory_path(OLD.path)) EXECUTE FUNCTION knowledge_enqueue();

-- Memory documents written before this migration are extracted too.
INSERT INTO knowledge_jobs (agent, scope, path, content_hash)
SELECT agent, scope, path, md5(content) FROM agent_docs WHERE knowledge_is_memory_path(path);

-- +goose Down
DROP TRIGGER IF EXISTS knowledge_enqueue_insert ON agent_docs;
DROP TRIGGER IF EXISTS knowledge_enqueue_update ON agent_docs;
DROP TRIGGER IF EXISTS knowledge_enqueue_delete ON agent_docs;
DROP FUNCTION IF EXISTS knowledge_enqueue();
DROP FUNCTION IF EXISTS knowledge_is_memory_path(text);
DROP TABLE IF EXISTS knowledge_jobs;
DROP SEQUENCE IF EXISTS knowledge_job_generation;
DROP TABLE IF EXISTS knowledge_relations;
DROP TABLE IF EXISTS knowledge_entities;
