package usage_test

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/switchboard-chat/switchboard/bot/usage"
)

// memStore is a usage.Store in memory.
type memStore struct {
	mu      sync.Mutex
	records []usage.Record
	ctxErr  error // the insert context's error, seen at insert time
	fail    error
}

func (m *memStore) InsertUsage(ctx context.Context, r usage.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctxErr = ctx.Err()
	if m.fail != nil {
		return m.fail
	}
	m.records = append(m.records, r)
	return nil
}

func (m *memStore) SumUsage(_ context.Context, q usage.Query) ([]usage.Total, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	groups := map[string]*usage.Total{}
	for _, r := range m.records {
		if r.At.Before(q.Since) || !match(q.Identity, r.Identity) || !match(q.Chat, r.Chat) ||
			!match(q.Agent, r.Agent) || !match(q.Model, r.Model) || !match(q.Job, r.Job) {
			continue
		}
		key := map[string]string{"": "", usage.ByIdentity: r.Identity, usage.ByChat: r.Chat, usage.ByAgent: r.Agent,
			usage.ByModel: r.Model, usage.ByJob: r.Job}[q.GroupBy]
		t := groups[key]
		if t == nil {
			t = &usage.Total{Key: key}
			groups[key] = t
		}
		t.Tokens.Input += r.Tokens.Input
		t.Tokens.Output += r.Tokens.Output
		t.Tokens.CacheRead += r.Tokens.CacheRead
		t.Tokens.CacheWrite += r.Tokens.CacheWrite
		t.Calls++
		if r.CostMicros != nil {
			t.CostMicros += *r.CostMicros
			t.PricedCalls++
		}
	}
	out := []usage.Total{}
	for _, t := range groups {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tokens.All() > out[j].Tokens.All() })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	if q.GroupBy == "" && len(out) == 0 {
		out = []usage.Total{{}}
	}
	return out, nil
}

func match(want, got string) bool { return want == "" || want == got }

var errDown = errors.New("database down")
