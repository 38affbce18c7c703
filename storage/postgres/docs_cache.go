package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
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

	mu        sync.Mutex
	listening bool
	epoch     uint64 // moves whenever what is kept may be out of date
	entries   map[string]map[string]map[string]string
}

// NewDocsCache returns a cache in front of db's documents. Call Listen to
// start serving reads from memory.
func NewDocsCache(db *DB) *DocsCache {
	return &DocsCache{DB: db, entries: map[string]map[string]map[string]string{}}
}

// GetDocs implements tools.DocStore: DB.GetDocs, from memory when this
// read was made since the last change.
func (c *DocsCache) GetDocs(ctx context.Context, agent string, scopes, paths []string) (map[string]map[string]string, error) {
	key := agent + "\x00" + strings.Join(scopes, "\x00") + "\x01" + strings.Join(paths, "\x00")
	c.mu.Lock()
	listening, epoch := c.listening, c.epoch
	if docs, ok := c.entries[key]; ok && listening {
		c.mu.Unlock()
		return cloneDocs(docs), nil
	}
	c.mu.Unlock()
	docs, err := c.DB.GetDocs(ctx, agent, scopes, paths)
	if err != nil || !listening {
		return docs, err
	}
	c.mu.Lock()
	if c.listening && c.epoch == epoch { // nothing changed since the read began
		if len(c.entries) >= maxCachedDocReads {
			clear(c.entries)
		}
		c.entries[key] = cloneDocs(docs)
	}
	c.mu.Unlock()
	return docs, nil
}

// PutDoc implements tools.DocStore: DB.PutDoc, then forgets what is kept
// (the notice of this change arrives too, but later).
func (c *DocsCache) PutDoc(ctx context.Context, key tools.DocKey, content string) error {
	defer c.invalidate()
	return c.DB.PutDoc(ctx, key, content)
}

// Listen keeps a connection listening to agent_docs' notices until ctx
// ends, serving reads from memory while it does. A lost connection is
// opened again (channels.Reconnect: a pause from 1 s growing to 30 s, an
// outage logged once); meanwhile reads go to PostgreSQL.
func (c *DocsCache) Listen(ctx context.Context) {
	health := channels.NewHealth("context-file notices", c.DB.logger, nil)
	_ = channels.Reconnect{Health: health, Op: "listen", Min: time.Second, Max: 30 * time.Second,
		Fresh: func(err error) bool { return errors.Is(err, errListenLost) },
	}.Run(ctx, func(ctx context.Context) error {
		err := c.listenOnce(ctx, health)
		c.setListening(false)
		return err
	})
}

// errListenLost marks a listening connection lost after LISTEN worked.
var errListenLost = errors.New("listening connection lost")

// listenOnce listens on one connection until it fails or ctx ends.
func (c *DocsCache) listenOnce(ctx context.Context, health *channels.Health) error {
	pc, err := c.DB.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack() // a listening connection must not go back to the pool
	defer closeConn(ctx, conn)
	if _, err := conn.Exec(ctx, "LISTEN agent_docs"); err != nil {
		return err
	}
	health.Succeeded("listen")
	c.setListening(true) // from now on every change is heard
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("%w: %w", errListenLost, err)
		}
		c.invalidate()
	}
}

// setListening drops what is kept and sets whether reads may be kept from
// now on.
func (c *DocsCache) setListening(listening bool) {
	c.mu.Lock()
	c.listening = listening
	c.epoch++
	clear(c.entries)
	c.mu.Unlock()
}

// invalidate drops what is kept: the documents changed.
func (c *DocsCache) invalidate() {
	c.mu.Lock()
	c.epoch++
	clear(c.entries)
	c.mu.Unlock()
}

func cloneDocs(docs map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(docs))
	for scope, files := range docs {
		out[scope] = maps.Clone(files)
	}
	return out
}
