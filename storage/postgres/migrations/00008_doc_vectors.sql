-- +goose Up

-- An embedding per memory document when an embeddings model is configured
-- (tools.memory.embedding.model); ranked by cosine similarity in the
-- daemon, so no database extension is needed.
ALTER TABLE agent_docs ADD COLUMN embedding real[];

-- +goose Down
ALTER TABLE agent_docs DROP COLUMN embedding;
