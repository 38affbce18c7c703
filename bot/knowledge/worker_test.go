package knowledge_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/knowledge"
	"github.com/switchboard-chat/switchboard/tools"
)

// memStore is an in-memory JobStore: queued jobs, the facts written, and
// what happened to each job.
type memStore struct {
	mu       sync.Mutex
	queue    []knowledge.Job
	facts    map[tools.DocKey]knowledge.Facts
	finished int
	retries  []retry
	// replaceErr, when set, fails the next ReplaceFacts.
	replaceErr error
}

type retry struct {
	after  time.Duration
	refund bool
	reason string
}

func (s *memStore) ClaimJobs(_ context.Context, limit int, _ time.Duration, maxAttempts int) ([]knowledge.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out, left []knowledge.Job
	for _, j := range s.queue {
		if len(out) < limit && j.Attempts < maxAttempts {
			j.Attempts++
			out = append(out, j)
			continue
		}
		left = append(left, j)
	}
	s.queue = left
	return out, nil
}

func (s *memStore) ReplaceFacts(_ context.Context, key tools.DocKey, _ string, f knowledge.Facts) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.replaceErr; err != nil {
		s.replaceErr = nil
		return false, err
	}
	if s.facts == nil {
		s.facts = map[tools.DocKey]knowledge.Facts{}
	}
	s.facts[key] = f
	return true, nil
}

func (s *memStore) FinishJob(context.Context, knowledge.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished++
	return nil
}

// RetryJob queues j again at once (the delay is only recorded).
func (s *memStore) RetryJob(_ context.Context, j knowledge.Job, after time.Duration, refund bool, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refund {
		j.Attempts--
	}
	s.queue = append(s.queue, j)
	s.retries = append(s.retries, retry{after, refund, reason})
	return nil
}

// stubModel answers each Chat with the next of its replies (an error, or
// text); it records the requests.
type stubModel struct {
	mu       sync.Mutex
	replies  []any
	requests []agentcore.Request
	block    chan struct{} // when set, Chat waits for ctx to end
}

func (m *stubModel) Name() string { return "stub" }

func (m *stubModel) Chat(ctx context.Context, req agentcore.Request, _ func(string)) (agentcore.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	var r any = `{"entities": [], "relations": []}`
	if len(m.replies) > 0 {
		r, m.replies = m.replies[0], m.replies[1:]
	}
	block := m.block
	m.mu.Unlock()
	if block != nil {
		close(block)
		<-ctx.Done()
		return agentcore.Response{}, ctx.Err()
	}
	if err, ok := r.(error); ok {
		return agentcore.Response{}, err
	}
	return agentcore.Response{Content: r.(string), Usage: agentcore.Usage{InputTokens: 100, OutputTokens: 20}}, nil
}

// meter records the calls it is asked about; refuse makes Admit refuse.
type meter struct {
	mu       sync.Mutex
	admitted []agentcore.MeteredCall
	recorded []agentcore.Usage
	refuse   bool
}

func (m *meter) Admit(_ context.Context, c agentcore.MeteredCall) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.admitted = append(m.admitted, c)
	if m.refuse {
		return &agentcore.RefusedError{Reply: "the chat's daily budget is used up"}
	}
	return nil
}

func (m *meter) Record(_ context.Context, _ agentcore.MeteredCall, u agentcore.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recorded = append(m.recorded, u)
}

// syncBuffer is a log sink safe for the worker's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type rig struct {
	store *memStore
	model *stubModel
	meter *meter
	log   *syncBuffer
	w     *knowledge.Worker
}

var docKey = tools.DocKey{Agent: "assistant", Scope: "chat:telegram:-100:7", Path: "memory/people.md"}

func newRig(t *testing.T, replies ...any) *rig {
	t.Helper()
	r := &rig{
		store: &memStore{queue: []knowledge.Job{{Key: docKey, Generation: 1, Exists: true, Content: "Alice works at Acme.", Hash: "h1"}}},
		model: &stubModel{replies: replies}, meter: &meter{}, log: &syncBuffer{},
	}
	r.w = knowledge.NewWorker(knowledge.Options{
		Store: r.store, Meter: r.meter, Logger: slog.New(slog.NewTextHandler(r.log, nil)),
		Models: func(agent string) (knowledge.Model, error) {
			if agent != "assistant" {
				return knowledge.Model{}, errors.New("no such agent")
			}
			return knowledge.Model{Provider: r.model, Name: "extract-model"}, nil
		},
		Backoff: func(n int) time.Duration { return time.Duration(n) * time.Minute },
	})
	return r
}

func (r *rig) pass(t *testing.T) {
	t.Helper()
	if err := r.w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
}

const aliceFacts = `{"entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
	"relations": [{"from": "Alice", "to": "Acme", "type": "works_at"}]}`

func TestWorkerStoresValidFacts(t *testing.T) {
	r := newRig(t, aliceFacts)
	r.pass(t)
	f := r.store.facts[docKey]
	if len(f.Entities) != 2 || len(f.Relations) != 1 || f.Relations[0] != (knowledge.Relation{From: "alice", To: "acme", Type: "works_at"}) {
		t.Fatalf("facts stored = %+v", f)
	}
	if r.store.finished != 1 || len(r.store.queue) != 0 {
		t.Errorf("job not finished: finished %d, queue %+v", r.store.finished, r.store.queue)
	}
	req := r.model.requests[0]
	if req.Model != "extract-model" || req.MaxTokens != knowledge.DefaultMaxTokens || !strings.Contains(req.System, "JSON") ||
		!strings.Contains(req.Messages[0].Content, "memory/people.md") || !strings.Contains(req.Messages[0].Content, "Alice works at Acme.") {
		t.Errorf("the model was asked %+v", req)
	}
	c := r.meter.admitted[0]
	if c.Model != "extract-model" || c.Call.Agent != "assistant" || c.Call.Channel != "telegram" || c.Call.ChatID != "-100" || c.Call.ThreadID != "7" {
		t.Errorf("metered as %+v; want the document's agent and chat", c)
	}
	if len(r.meter.recorded) != 1 || r.meter.recorded[0].InputTokens != 100 {
		t.Errorf("usage recorded = %+v", r.meter.recorded)
	}
}

func TestWorkerDropsBadAnswers(t *testing.T) {
	for name, answer := range map[string]string{
		"broken JSON":    `{"entities": [`,
		"wrong types":    `{"entities": [{"name": ["Alice"], "type": "person"}], "relations": []}`,
		"unknown entity": `{"entities": [{"name": "Alice", "type": "person"}], "relations": [{"from": "Alice", "to": "Root", "type": "grants"}]}`,
		"oversized":      `{"entities": [{"name": "Alice", "type": "` + strings.Repeat("x", knowledge.MaxOutputBytes) + `"}], "relations": []}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, answer)
			r.pass(t)
			if len(r.store.facts) != 0 {
				t.Errorf("facts written from a bad answer: %+v", r.store.facts)
			}
			if r.store.finished != 1 || len(r.store.retries) != 0 {
				t.Errorf("a bad answer was not dropped: finished %d, retries %+v", r.store.finished, r.store.retries)
			}
			if !strings.Contains(r.log.String(), "answer refused") || !strings.Contains(r.log.String(), "memory/people.md") {
				t.Errorf("log lacks the refusal: %s", r.log.String())
			}
		})
	}
}

func TestWorkerRetriesAfterModelError(t *testing.T) {
	r := newRig(t, &agentcore.ProviderError{Provider: "openai", Status: 503, Err: errors.New("overloaded")}, aliceFacts)
	r.pass(t)
	if len(r.store.retries) != 1 || r.store.retries[0].after != time.Minute || r.store.retries[0].refund ||
		!strings.Contains(r.store.retries[0].reason, "503") {
		t.Fatalf("after a model error: retries %+v; want one after the first backoff with the error", r.store.retries)
	}
	if len(r.store.facts) != 0 || !strings.Contains(r.log.String(), "will try again") {
		t.Errorf("facts %+v; log %s", r.store.facts, r.log.String())
	}
	r.pass(t)
	if len(r.store.facts[docKey].Entities) != 2 || r.store.finished != 1 {
		t.Errorf("the retry stored %+v, finished %d", r.store.facts, r.store.finished)
	}
}

func TestWorkerGivesUpAfterMaxAttempts(t *testing.T) {
	fail := &agentcore.ProviderError{Provider: "openai", Status: 500, Err: errors.New("boom")}
	replies := make([]any, knowledge.DefaultMaxAttempts+1)
	for i := range replies {
		replies[i] = fail
	}
	r := newRig(t, replies...)
	for range knowledge.DefaultMaxAttempts + 2 {
		r.pass(t)
	}
	if n := len(r.model.requests); n != knowledge.DefaultMaxAttempts {
		t.Errorf("the model was asked %d times, want %d", n, knowledge.DefaultMaxAttempts)
	}
	if !strings.Contains(r.log.String(), "gave up") {
		t.Errorf("log lacks the give-up: %s", r.log.String())
	}
}

func TestWorkerBudgetRefusalDefers(t *testing.T) {
	r := newRig(t, aliceFacts)
	r.meter.refuse = true
	r.pass(t)
	if len(r.model.requests) != 0 {
		t.Errorf("the model was called despite the budget")
	}
	if len(r.store.retries) != 1 || !r.store.retries[0].refund || r.store.retries[0].after != knowledge.DefaultDeferral {
		t.Errorf("retries = %+v; want one deferred, its attempt refunded", r.store.retries)
	}
	if !strings.Contains(r.log.String(), "refused by a budget") {
		t.Errorf("log lacks the refusal: %s", r.log.String())
	}
}

func TestWorkerHandsBackOnShutdown(t *testing.T) {
	r := newRig(t)
	r.model.block = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.w.Run(ctx) }()
	<-r.model.block // the call is in flight
	cancel()
	<-done
	if len(r.store.retries) != 1 || !r.store.retries[0].refund || r.store.retries[0].after != 0 || r.store.finished != 0 {
		t.Errorf("after shutdown: retries %+v, finished %d; want the job handed back, due at once", r.store.retries, r.store.finished)
	}
}

func TestWorkerUnknownAgentRetries(t *testing.T) {
	r := newRig(t)
	r.store.queue[0].Key.Agent = "retired"
	r.pass(t)
	if len(r.store.retries) != 1 || !strings.Contains(r.store.retries[0].reason, "no model for agent retired") {
		t.Errorf("retries = %+v", r.store.retries)
	}
}

func TestWorkerRetriesAfterAStoreFailure(t *testing.T) {
	r := newRig(t, aliceFacts, aliceFacts)
	r.store.replaceErr = errors.New("connection reset")
	r.pass(t)
	if len(r.store.retries) != 1 || !strings.Contains(r.store.retries[0].reason, "connection reset") || r.store.finished != 0 {
		t.Fatalf("after a store failure: retries %+v, finished %d", r.store.retries, r.store.finished)
	}
	r.pass(t)
	if len(r.store.facts[docKey].Entities) != 2 || r.store.finished != 1 {
		t.Errorf("the retry stored %+v, finished %d", r.store.facts, r.store.finished)
	}
}
