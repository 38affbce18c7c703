package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/knowledge"
)

var _ knowledge.GraphStore = (*DB)(nil)

// graphNodesSQL finds the entities of agent $1 in scopes $2 whose key
// matches a pattern of $3 (the exact key $4 first), at most $6, and walks
// the relations of the same scopes from them, in either direction, up to
// $5 steps; it returns at most $6 + 1 nodes, nearest first (and at each
// depth the exact match, then the shortest keys), each named as the first
// scope of $2 that has it names it.
const graphNodesSQL = `
	WITH RECURSIVE seeds AS (
		SELECT key FROM knowledge_entities
		WHERE agent = $1 AND scope = ANY($2) AND key LIKE ANY($3)
		GROUP BY key ORDER BY bool_or(key = $4) DESC, length(key), key LIMIT $6
	), walk(key, depth) AS (
		SELECT key, 0 FROM seeds
		UNION
		SELECT CASE WHEN r.from_key = w.key THEN r.to_key ELSE r.from_key END, w.depth + 1
		FROM walk w JOIN knowledge_relations r
		  ON r.agent = $1 AND r.scope = ANY($2) AND (r.from_key = w.key OR r.to_key = w.key)
		WHERE w.depth < $5
	), near AS (
		SELECT key, min(depth) AS depth FROM walk GROUP BY key
		ORDER BY 2, key = $4 DESC, length(key), key LIMIT $6 + 1
	)
	SELECT n.key, n.depth, coalesce(e.name, n.key), coalesce(e.type, '')
	FROM near n LEFT JOIN LATERAL (
		SELECT name, type FROM knowledge_entities
		WHERE agent = $1 AND scope = ANY($2) AND key = n.key
		ORDER BY array_position($2, scope), path LIMIT 1) e ON true
	ORDER BY n.depth, n.key = $4 DESC, length(n.key), n.key`

// graphEdgesSQL returns at most $4 + 1 relations of agent $1 in scopes $2
// between nodes $3 (nearest first), those of the nearest nodes first.
const graphEdgesSQL = `
	SELECT from_key, to_key, type, scope, path FROM knowledge_relations
	WHERE agent = $1 AND scope = ANY($2) AND from_key = ANY($3) AND to_key = ANY($3)
	ORDER BY least(array_position($3, from_key), array_position($3, to_key)),
	         greatest(array_position($3, from_key), array_position($3, to_key)), type, scope, path
	LIMIT $4 + 1`

// SearchGraph implements knowledge.GraphStore, in one read-only snapshot.
func (db *DB) SearchGraph(ctx context.Context, agent string, scopes []string, q knowledge.Query) (knowledge.Graph, error) {
	var g knowledge.Graph
	if len(q.Terms) == 0 {
		return g, nil
	}
	patterns := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		patterns[i] = "%" + likeEscape(storable(t)) + "%"
	}
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
		g = knowledge.Graph{}
		rows, err := tx.Query(ctx, graphNodesSQL, storable(agent), storableList(scopes), patterns, storable(q.Terms[0]), q.Depth, q.MaxEntities)
		if err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
		if g.Nodes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (knowledge.Node, error) {
			var n knowledge.Node
			return n, r.Scan(&n.Key, &n.Depth, &n.Name, &n.Type)
		}); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
		if len(g.Nodes) > q.MaxEntities {
			g.Nodes, g.MoreNodes = g.Nodes[:q.MaxEntities], true
		}
		if len(g.Nodes) == 0 {
			return nil
		}
		keys := make([]string, len(g.Nodes))
		for i, n := range g.Nodes {
			keys[i] = n.Key
		}
		rows, err = tx.Query(ctx, graphEdgesSQL, storable(agent), storableList(scopes), keys, q.MaxRelations)
		if err != nil {
			return fmt.Errorf("relations: %w", err)
		}
		if g.Edges, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (knowledge.Edge, error) {
			var e knowledge.Edge
			return e, r.Scan(&e.From, &e.To, &e.Type, &e.Scope, &e.Path)
		}); err != nil {
			return fmt.Errorf("relations: %w", err)
		}
		if len(g.Edges) > q.MaxRelations {
			g.Edges, g.MoreEdges = g.Edges[:q.MaxRelations], true
		}
		return nil
	})
	if err != nil {
		return knowledge.Graph{}, fmt.Errorf("search knowledge graph: %w", err)
	}
	return g, nil
}

// likeEscape escapes LIKE's wildcards (and its escape character) in s, so
// every character of a search term matches itself.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
