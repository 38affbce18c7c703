package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/tools"
)

var (
	_ tools.DocStore    = (*DB)(nil)
	_ tools.VectorStore = (*DB)(nil)
)

// maxVectorScan bounds the memory documents one NearestMemory compares.
const maxVectorScan = 5000

// maxDocBytes bounds one stored document.
const maxDocBytes = 1 << 20

// GetDoc implements tools.DocStore.
func (db *DB) GetDoc(ctx context.Context, key tools.DocKey) (string, error) {
	var content string
	err := db.pool.QueryRow(ctx, `SELECT content FROM agent_docs WHERE agent = $1 AND scope = $2 AND path = $3`,
		storable(key.Agent), storable(key.Scope), storable(key.Path)).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", tools.ErrNoDoc
	}
	if err != nil {
		return "", fmt.Errorf("get doc %s: %w", key.Path, err)
	}
	return content, nil
}

// PutDoc implements tools.DocStore: empty content deletes the document.
func (db *DB) PutDoc(ctx context.Context, key tools.DocKey, content string) error {
	if len(content) > maxDocBytes {
		return fmt.Errorf("put doc %s: %d bytes, the limit is %d", key.Path, len(content), maxDocBytes)
	}
	var err error
	if content == "" {
		_, err = db.pool.Exec(ctx, `DELETE FROM agent_docs WHERE agent = $1 AND scope = $2 AND path = $3`,
			storable(key.Agent), storable(key.Scope), storable(key.Path))
	} else {
		_, err = db.pool.Exec(ctx, `INSERT INTO agent_docs (agent, scope, path, content) VALUES ($1, $2, $3, $4)
			ON CONFLICT (agent, scope, path) DO UPDATE SET content = EXCLUDED.content, updated_at = now(),
				embedding = CASE WHEN agent_docs.content = EXCLUDED.content THEN agent_docs.embedding END`,
			storable(key.Agent), storable(key.Scope), storable(key.Path), storable(content))
	}
	if err != nil {
		return fmt.Errorf("put doc %s: %w", key.Path, err)
	}
	return nil
}

// GetDocs implements tools.DocStore: one query for every scope and path.
func (db *DB) GetDocs(ctx context.Context, agent string, scopes, paths []string) (map[string]map[string]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT scope, path, content FROM agent_docs
		WHERE agent = $1 AND scope = ANY($2) AND path = ANY($3)`, storable(agent), scopes, paths)
	if err != nil {
		return nil, fmt.Errorf("get docs: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var scope, path, content string
		if err := rows.Scan(&scope, &path, &content); err != nil {
			return nil, fmt.Errorf("get docs: %w", err)
		}
		if out[scope] == nil {
			out[scope] = map[string]string{}
		}
		out[scope][path] = content
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get docs: %w", err)
	}
	return out, nil
}

// SearchMemory implements tools.DocStore with PostgreSQL full-text search
// (websearch syntax: words, "phrases", -excluded), ranked by ts_rank.
func (db *DB) SearchMemory(ctx context.Context, agent string, scopes []string, query string, limit int) ([]tools.MemoryHit, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT path, scope, ts_rank(tsv, q) AS rank,
		       ts_headline('english', content, q, 'MaxFragments=2, MaxWords=20, MinWords=5, StartSel=**, StopSel=**')
		FROM agent_docs, websearch_to_tsquery('english', $3) AS q
		WHERE agent = $1 AND scope = ANY($2) AND (path LIKE 'memory/%' OR path IN ('MEMORY.md', 'memory.md')) AND tsv @@ q
		ORDER BY rank DESC, updated_at DESC
		LIMIT $4`, storable(agent), scopes, storable(query), limit)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tools.MemoryHit, error) {
		var h tools.MemoryHit
		var rank float32
		err := r.Scan(&h.Path, &h.Scope, &rank, &h.Snippet)
		h.Rank = float64(rank)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	return hits, nil
}

// SetDocVector implements tools.VectorStore.
func (db *DB) SetDocVector(ctx context.Context, key tools.DocKey, vec []float32) error {
	_, err := db.pool.Exec(ctx, `UPDATE agent_docs SET embedding = $4 WHERE agent = $1 AND scope = $2 AND path = $3`,
		storable(key.Agent), storable(key.Scope), storable(key.Path), vec)
	if err != nil {
		return fmt.Errorf("set doc vector %s: %w", key.Path, err)
	}
	return nil
}

// NearestMemory implements tools.VectorStore: cosine similarity computed
// here over the (at most maxVectorScan newest) embedded memory documents.
func (db *DB) NearestMemory(ctx context.Context, agent string, scopes []string, vec []float32, limit int) ([]tools.MemoryHit, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT path, scope, left(content, 240), embedding FROM agent_docs
		WHERE agent = $1 AND scope = ANY($2) AND embedding IS NOT NULL
		  AND (path LIKE 'memory/%' OR path IN ('MEMORY.md', 'memory.md'))
		ORDER BY updated_at DESC LIMIT $3`, storable(agent), scopes, maxVectorScan)
	if err != nil {
		return nil, fmt.Errorf("nearest memory: %w", err)
	}
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tools.MemoryHit, error) {
		var h tools.MemoryHit
		var emb []float32
		if err := r.Scan(&h.Path, &h.Scope, &h.Snippet, &emb); err != nil {
			return h, err
		}
		h.Rank = cosine(vec, emb)
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("nearest memory: %w", err)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Rank > hits[j].Rank })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// cosine is the cosine similarity of a and b (0 when their sizes differ
// or either is zero).
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
