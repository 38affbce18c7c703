package postgres

import (
	"context"
	"maps"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// maxCachedDocReads bounds a DocsCache: one entry per agent and user (or
// chat) that asked lately. When it is full it starts over.
const maxCachedDocReads = 10_000

// DocsCache is DB with GetDocs served from memory while it listens to
// agent_docs' change notices (migration 18), so the context files an agent
// reads on every run cost no round trip.
// A change made through this cache is seen at once; one made by another
// replica as soon as its notice arrives (milliseconds). While it is not
// listening (before Listen runs, after a lost connection until it listens
// again) every read goes to PostgreSQL. Safe for concurrent use.
type DocsCache struct {
	*DB
	docs memo[map[string]map[string]string]
}

// NewDocsCache returns a cache in front of db's documents. Call Listen to
// start serving reads from memory.
func NewDocsCache(db *DB) *DocsCache {
	return &DocsCache{DB: db, docs: memo[map[string]map[string]string]{max: maxCachedDocReads}}
}

// GetDocs implements tools.DocStore: DB.GetDocs, from memory when this
// read was made since the last change.
func (c *DocsCache) GetDocs(ctx context.Context, agent string, scopes, paths []string) (map[string]map[string]string, error) {
	key := agent + "\x00" + strings.Join(scopes, "\x00") + "\x01" + strings.Join(paths, "\x00")
	return c.docs.get(key, func() (map[string]map[string]string, error) {
		return c.DB.GetDocs(ctx, agent, scopes, paths)
	}, cloneDocs)
}

// PutDoc implements tools.DocStore: DB.PutDoc, then forgets what is kept
// (the notice of this change arrives too, but later).
func (c *DocsCache) PutDoc(ctx context.Context, key tools.DocKey, content string) error {
	defer c.docs.invalidate()
	return c.DB.PutDoc(ctx, key, content)
}

// Listen keeps a connection listening to agent_docs' notices until ctx
// ends, serving reads from memory while it does (see listenForChanges).
func (c *DocsCache) Listen(ctx context.Context) {
	listenForChanges(ctx, c.DB, "context-file notices", "agent_docs", &c.docs)
}

func cloneDocs(docs map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(docs))
	for scope, files := range docs {
		out[scope] = maps.Clone(files)
	}
	return out
}
