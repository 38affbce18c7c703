package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// memo keeps what reads returned, by key, while change notices keep it
// current: only while listening, and only a read during which nothing
// changed (the epoch moves with every change). When it holds max entries
// it starts over. Safe for concurrent use.
type memo[V any] struct {
	max int

	mu        sync.Mutex
	listening bool
	epoch     uint64
	entries   map[string]V
}

// get returns key's kept value, cloned, or load's, which it keeps when
// nothing changed while load ran.
func (m *memo[V]) get(key string, load func() (V, error), clone func(V) V) (V, error) {
	m.mu.Lock()
	listening, epoch := m.listening, m.epoch
	if v, ok := m.entries[key]; ok && listening {
		m.mu.Unlock()
		return clone(v), nil
	}
	m.mu.Unlock()
	v, err := load()
	if err != nil || !listening {
		return v, err
	}
	m.mu.Lock()
	if m.listening && m.epoch == epoch {
		if m.entries == nil || len(m.entries) >= m.max {
			m.entries = make(map[string]V)
		}
		m.entries[key] = clone(v)
	}
	m.mu.Unlock()
	return v, nil
}

// setListening drops what is kept and sets whether reads may be kept from
// now on.
func (m *memo[V]) setListening(listening bool) {
	m.mu.Lock()
	m.listening = listening
	m.epoch++
	clear(m.entries)
	m.mu.Unlock()
}

// invalidate drops what is kept: what it was read from changed.
func (m *memo[V]) invalidate() {
	m.mu.Lock()
	m.epoch++
	clear(m.entries)
	m.mu.Unlock()
}

// isListening reports whether reads are kept.
func (m *memo[V]) isListening() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listening
}

// kept is a memo as a notice listener drives it.
type kept interface {
	setListening(bool)
	invalidate()
}

// errListenLost marks a listening connection lost after LISTEN worked.
var errListenLost = errors.New("listening connection lost")

// listenForChanges keeps a connection listening on channel until ctx
// ends, dropping what memos keep on every notice, and lets them keep
// reads while it listens. A lost connection is opened again
// (channels.Reconnect: a pause from 1 s growing to 30 s, an outage logged
// once as what); meanwhile the memos keep nothing and reads go to
// PostgreSQL.
func listenForChanges(ctx context.Context, db *DB, what, channel string, memos ...kept) {
	set := func(on bool) {
		for _, m := range memos {
			m.setListening(on)
		}
	}
	health := channels.NewHealth(what, db.logger, nil)
	_ = channels.Reconnect{Health: health, Op: "listen", Min: time.Second, Max: 30 * time.Second,
		Fresh: func(err error) bool { return errors.Is(err, errListenLost) },
	}.Run(ctx, func(ctx context.Context) error {
		defer set(false)
		pc, err := db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conn := pc.Hijack() // a listening connection must not go back to the pool
		defer closeConn(ctx, conn)
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
			return err
		}
		health.Succeeded("listen")
		set(true) // from now on every change is heard
		for {
			if _, err := conn.WaitForNotification(ctx); err != nil {
				return fmt.Errorf("%w: %w", errListenLost, err)
			}
			for _, m := range memos {
				m.invalidate()
			}
		}
	})
}
