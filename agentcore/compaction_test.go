package agentcore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// summarizing is a model that answers chat calls "re: <last message>" and
// summary calls (their system prompt starts "You summarize") with
// summary(transcript); it records every request.
type summarizing struct {
	mu       sync.Mutex
	requests []agentcore.Request
	summary  func(transcript string) (agentcore.Response, error)
}

func (*summarizing) Name() string { return "openai" }

func isSummaryCall(req agentcore.Request) bool { return strings.HasPrefix(req.System, "You summarize") }

func (m *summarizing) Chat(_ context.Context, req agentcore.Request, _ func(string)) (agentcore.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	if isSummaryCall(req) {
		return m.summary(req.Messages[0].Content)
	}
	return agentcore.Response{Content: "re: " + req.Messages[len(req.Messages)-1].Content}, nil
}

// chats returns the requests that were not summary calls.
func (m *summarizing) chats() (out []agentcore.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests {
		if !isSummaryCall(r) {
			out = append(out, r)
		}
	}
	return out
}

func (m *summarizing) summaryCalls() (out []agentcore.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests {
		if isSummaryCall(r) {
			out = append(out, r)
		}
	}
	return out
}

// seedTurns stores n finished turns of about 400 bytes each.
func seedTurns(t *testing.T, db *postgres.DB, session string, n int) {
	t.Helper()
	var msgs []agentcore.Message
	for i := 1; i <= n; i++ {
		msgs = append(msgs,
			agentcore.Message{Role: agentcore.RoleUser, Content: fmt.Sprintf("m%03d %s", i, strings.Repeat("u", 200)), ExternalID: fmt.Sprintf("x%d", i)},
			agentcore.Message{Role: agentcore.RoleAssistant, Content: fmt.Sprintf("r%03d %s", i, strings.Repeat("a", 200))})
	}
	if _, err := db.Append(context.Background(), session, msgs...); err != nil {
		t.Fatal(err)
	}
}

// estimate is the documented estimate: 4 bytes a token, 4 per message.
func estimate(req agentcore.Request) int {
	n := 4 + (len(req.System)+3)/4
	for _, m := range req.Messages {
		n += 4 + (len(m.Content)+3)/4
	}
	return n
}

func compactingAgent(db *postgres.DB, model *summarizing, system string, compact bool) *agentcore.Agent {
	a := &agentcore.Agent{
		Name: "a", Model: "m", SystemPrompt: system, Provider: model, Tools: tools.NewRegistry(tools.RegistryOptions{}), History: db,
		HistoryLimit: 1000, ContextTokens: 2000,
	}
	if compact {
		a.Compactor = &agentcore.Compactor{Store: db}
	}
	return a
}

// The history sent fits the budget with the system prompt counted: a
// longer prompt leaves room for fewer turns.
func TestContextTokensCountTheSystemPrompt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	sent := map[string]int{}
	for _, system := range []string{"short", strings.Repeat("s", 4000)} {
		session := fmt.Sprintf("a/test:%d", len(system))
		seedTurns(t, db, session, 40)
		model := &summarizing{}
		a := compactingAgent(db, model, system, false)
		if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "now"}}); err != nil {
			t.Fatal(err)
		}
		req := model.chats()[0]
		if got := estimate(req); got > a.ContextTokens {
			t.Fatalf("system %d bytes: the request is %d tokens, over the budget of %d", len(system), got, a.ContextTokens)
		}
		if last := req.Messages[len(req.Messages)-1].Content; last != "now" {
			t.Fatalf("the newest message is not last: %q", last)
		}
		sent[system] = len(req.Messages)
	}
	if sent["short"] <= sent[strings.Repeat("s", 4000)] {
		t.Fatalf("messages sent: %v; want fewer beside a long system prompt", sent)
	}
}

// The turns left out are summarized once, exactly up to the window's
// start; the next call gets the summary in their place.
func TestCompactionSummaryCoversExactlyTheTurnsLeftOut(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/test:compact"
	seedTurns(t, db, session, 40)
	model := &summarizing{summary: func(tr string) (agentcore.Response, error) {
		// Name the newest turn summarized, to follow the chain.
		i := strings.LastIndex(tr, "[user] m")
		return agentcore.Response{Content: "SUMMARY up to " + tr[i+7:i+11]}, nil
	}}
	a := compactingAgent(db, model, "sys", true)
	if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "q1"}}); err != nil {
		t.Fatal(err)
	}
	a.Compactor.Wait()
	first := model.chats()[0]
	s, err := db.Summary(ctx, session)
	if err != nil || s.FromSeq != 1 || s.ToSeq%2 != 0 || s.ToSeq >= first.Messages[0].Seq {
		t.Fatalf("stored summary %+v, %v; want whole turns from 1, before the window at %d", s, err, first.Messages[0].Seq)
	}
	turns := s.ToSeq / 2
	if s.Text != fmt.Sprintf("SUMMARY up to m%03d", turns) {
		t.Fatalf("summary %q, want it to end at turn %d", s.Text, turns)
	}
	sc := model.summaryCalls()
	if len(sc) != 1 {
		t.Fatalf("%d summary calls, want 1", len(sc))
	}
	if tr := sc[0].Messages[0].Content; !strings.Contains(tr, "m001") || !strings.Contains(tr, fmt.Sprintf("r%03d", turns)) ||
		strings.Contains(tr, fmt.Sprintf("m%03d", turns+1)) {
		t.Fatalf("the summary request does not hold exactly turns 1..%d:\n%s", turns, tr)
	}

	// Each call gets the summary in place of what it covers, fits the
	// budget, and what lies between is summarized next, onto the last.
	const calls = 8
	for q := 2; q <= calls; q++ {
		if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: fmt.Sprintf("q%d", q)}}); err != nil {
			t.Fatal(err)
		}
		a.Compactor.Wait()
		req := model.chats()[q-1]
		if !strings.HasPrefix(req.Messages[0].Content, "Summary of the earlier conversation") {
			t.Fatalf("call %d does not start with the summary: %q", q, req.Messages[0].Content)
		}
		if got := estimate(req); got > a.ContextTokens {
			t.Fatalf("call %d is %d tokens, over %d", q, got, a.ContextTokens)
		}
		if req.Messages[1].Seq <= s.ToSeq {
			t.Fatalf("call %d: message %d is sent and summarized both", q, req.Messages[1].Seq)
		}
		next, err := db.Summary(ctx, session)
		if err != nil || next.ToSeq < s.ToSeq || next.FromSeq != 1 {
			t.Fatalf("summary after call %d: %+v, %v", q, next, err)
		}
		t.Logf("call %d: window from %d, summary then %d..%d", q, req.Messages[1].Seq, next.FromSeq, next.ToSeq)
		s = next
	}
	for _, c := range model.summaryCalls()[1:] {
		if !strings.Contains(c.Messages[0].Content, "Summary so far:\nSUMMARY up to") {
			t.Fatalf("a later summary request does not take in the summary before it:\n%s", c.Messages[0].Content)
		}
	}
	// In the end nothing lies between the summary and the window.
	last := model.chats()[calls-1]
	if last.Messages[1].Seq != s.ToSeq+1 && s.ToSeq+1 != last.Messages[1].Seq {
		t.Fatalf("messages %d..%d are neither sent nor summarized", s.ToSeq+1, last.Messages[1].Seq-1)
	}
}

// A summary call that fails or answers nothing leaves the history as it
// was, and the reply is given all the same.
func TestCompactionFailureChangesNothing(t *testing.T) {
	for name, answer := range map[string]func(string) (agentcore.Response, error){
		"error": func(string) (agentcore.Response, error) { return agentcore.Response{}, errors.New("HTTP 500") },
		"only tools": func(string) (agentcore.Response, error) {
			return agentcore.Response{ToolCalls: []agentcore.ToolCall{{ID: "x", Name: "exec"}}}, nil
		},
		"blank": func(string) (agentcore.Response, error) { return agentcore.Response{Content: " \n\x00"}, nil },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := pgtest.Open(t, ctx)
			const session = "a/test:fail"
			seedTurns(t, db, session, 40)
			before, _ := db.Load(ctx, session, 0)
			model := &summarizing{summary: answer}
			a := compactingAgent(db, model, "sys", true)
			res, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "q"}})
			if err != nil || res.Text != "re: q" {
				t.Fatalf("Run = %+v, %v; want the reply", res, err)
			}
			a.Compactor.Wait()
			if s, err := db.Summary(ctx, session); err != nil || s.Text != "" {
				t.Fatalf("a summary was stored: %+v, %v", s, err)
			}
			after, _ := db.Load(ctx, session, 0)
			if len(after) != len(before)+2 {
				t.Fatalf("history has %d messages, want the %d before plus the question and reply", len(after), len(before))
			}
		})
	}
}

// A failed compaction is not tried again on every run: the session's next
// one waits out the backoff, and runs meanwhile go on without a summary.
func TestCompactionFailureBacksOff(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/test:backoff"
	seedTurns(t, db, session, 40)
	failing := true
	model := &summarizing{summary: func(string) (agentcore.Response, error) {
		if failing {
			return agentcore.Response{}, errors.New("HTTP 503")
		}
		return agentcore.Response{Content: "SUMMARY"}, nil
	}}
	a := compactingAgent(db, model, "sys", true)
	a.Compactor.Backoff = time.Hour
	ask := func(q string) {
		t.Helper()
		if res, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: q}}); err != nil || res.Text != "re: "+q {
			t.Fatalf("Run(%q) = %+v, %v; want the reply", q, res, err)
		}
		a.Compactor.Wait()
	}
	ask("q1")
	ask("q2")
	if n := len(model.summaryCalls()); n != 1 {
		t.Fatalf("%d summary calls after a failure and another run within the backoff, want 1", n)
	}
	agentcore.EndCompactBackoff(a.Compactor)
	ask("q3") // fails again: the next wait is twice as long
	if n, times := len(model.summaryCalls()), agentcore.CompactFailures(a.Compactor, session); n != 2 || times != 2 {
		t.Fatalf("after the backoff: %d summary calls, %d failures in a row; want 2 and 2", n, times)
	}
	agentcore.EndCompactBackoff(a.Compactor)
	failing = false
	ask("q4")
	if s, err := db.Summary(ctx, session); err != nil || s.Text != "SUMMARY" {
		t.Fatalf("summary after the model came back = %+v, %v", s, err)
	}
	if times := agentcore.CompactFailures(a.Compactor, session); times != 0 {
		t.Fatalf("%d failures in a row remembered after a success, want none", times)
	}
}

// /reset hides the summary with the turns it retells: the next call is
// sent neither.
func TestResetHidesTheSummary(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/test:resetsum"
	seedTurns(t, db, session, 40)
	model := &summarizing{summary: func(string) (agentcore.Response, error) {
		return agentcore.Response{Content: "SUMMARY of the old talk"}, nil
	}}
	a := compactingAgent(db, model, "sys", true)
	for _, q := range []string{"q1", "q2"} {
		if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: q}}); err != nil {
			t.Fatal(err)
		}
		a.Compactor.Wait()
	}
	if !strings.Contains(model.chats()[1].Messages[0].Content, "SUMMARY of the old talk") {
		t.Fatal("the call after compaction was not sent the summary")
	}
	if _, err := db.ResetScope(ctx, "test:resetsum", "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "fresh"}}); err != nil {
		t.Fatal(err)
	}
	a.Compactor.Wait()
	last := model.chats()[2]
	if len(last.Messages) != 1 || last.Messages[0].Content != "fresh" {
		t.Fatalf("after /reset the model was sent %+v, want only the new message", last.Messages)
	}
}

// Turns that history_limit leaves out are summarized too: a message
// older than the window is sent, or summarized, never just lost.
func TestCompactionCoversWhatHistoryLimitLeavesOut(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/test:limit"
	seedTurns(t, db, session, 10)
	model := &summarizing{summary: func(string) (agentcore.Response, error) {
		return agentcore.Response{Content: "SUMMARY"}, nil
	}}
	a := compactingAgent(db, model, "sys", true)
	a.ContextTokens, a.HistoryLimit = 0, 8
	if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "q"}}); err != nil {
		t.Fatal(err)
	}
	a.Compactor.Wait()
	first := model.chats()[0].Messages[0].Seq
	s, err := db.Summary(ctx, session)
	if err != nil || s.FromSeq != 1 || s.ToSeq != first-1 {
		t.Fatalf("summary %+v, %v; want it to cover 1..%d, everything before the window", s, err, first-1)
	}
}
