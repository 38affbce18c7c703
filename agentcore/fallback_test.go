package agentcore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// fallbackClock is the fixed time the fallback tests' status shows.
var fallbackClock = time.Date(2026, 5, 4, 12, 3, 4, 0, time.UTC)

// fallbackTest is a Fallbacks on the OpenAI provider of a fake server,
// retrying without waiting, with its log kept.
type fallbackTest struct {
	s   *llmtest.Server
	f   *agentcore.Fallbacks
	log *bytes.Buffer
}

func newFallbackTest(t *testing.T, attempts int, fallbacks ...string) *fallbackTest {
	t.Helper()
	s, p := newOpenAITest(t)
	return wrapFallbacks(s, p, attempts, fallbacks...)
}

// wrapFallbacks wraps p as the daemon does: retries, then fallbacks.
func wrapFallbacks(s *llmtest.Server, p agentcore.Provider, attempts int, fallbacks ...string) *fallbackTest {
	log := &bytes.Buffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	r := agentcore.WithRetry(p, agentcore.RetryOptions{Attempts: attempts, Logger: logger,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	f := agentcore.WithFallbacks(r, fallbacks, agentcore.FallbackOptions{Logger: logger, Now: func() time.Time { return fallbackClock }})
	return &fallbackTest{s: s, f: f, log: log}
}

// chat asks model to answer text, collecting what it streams.
func (ft *fallbackTest) chat(model, text string) (agentcore.Response, string, error) {
	req := userReq(text)
	req.Model = model
	var shown string // what a chat shows: the latest text so far
	resp, err := ft.f.Chat(context.Background(), req, func(soFar string) { shown = soFar })
	return resp, shown, err
}

// modelsAsked lists the model of every request the fake server got.
func modelsAsked(s *llmtest.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Model)
	}
	return out
}

func assertAsked(t *testing.T, s *llmtest.Server, want ...string) {
	t.Helper()
	if got := modelsAsked(s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("models asked = %v, want %v", got, want)
	}
}

func assertStatus(t *testing.T, f *agentcore.Fallbacks, want string) {
	t.Helper()
	if got := f.StatusLine("gpt-x"); got != want {
		t.Fatalf("status line = %q, want %q", got, want)
	}
}

func TestFallbackAnswersAfter500(t *testing.T) {
	ft := newFallbackTest(t, 2, "gpt-y")
	assertStatus(t, ft.f, "✅ model gpt-x (fallbacks: gpt-y, not needed so far)")
	ft.s.FailModel("gpt-x", http.StatusInternalServerError)
	resp, streamed, err := ft.chat("gpt-x", "hello")
	want := "echo: hello (history: 1 user messages)"
	if err != nil || resp.Content != want || resp.Model != "gpt-y" {
		t.Fatalf("Chat = %+v, %v; want gpt-y's %q", resp, err, want)
	}
	if streamed != want {
		t.Fatalf("streamed %q, want exactly the fallback's answer %q", streamed, want)
	}
	assertAsked(t, ft.s, "gpt-x", "gpt-x", "gpt-y") // retried first, then the fallback
	if n := strings.Count(ft.log.String(), "a fallback model answered"); n != 1 {
		t.Fatalf("%d fallback warnings, want 1:\n%s", n, ft.log)
	}
	for _, s := range []string{"level=WARN", "model=gpt-x", `reason="HTTP 500"`, "answered_by=gpt-y"} {
		if !strings.Contains(ft.log.String(), s) {
			t.Fatalf("log lacks %s:\n%s", s, ft.log)
		}
	}
	want1 := agentcore.FallbackState{Failed: "gpt-x", Reason: "HTTP 500", Answered: "gpt-y", Since: fallbackClock, Active: true}
	if st := ft.f.State(); st != want1 {
		t.Fatalf("state = %+v, want %+v", st, want1)
	}
	assertStatus(t, ft.f, "⚠️ model gpt-x failing (HTTP 500); answering with gpt-y since 12:03:04 UTC")

	// The model is back: it answers, and the status says the fallback is over.
	ft.s.FailModel("gpt-x", 0)
	if resp, _, err := ft.chat("gpt-x", "again"); err != nil || resp.Model != "gpt-x" {
		t.Fatalf("Chat = %+v, %v; want gpt-x's answer", resp, err)
	}
	if st := ft.f.State(); st.Active || st.Recovered != fallbackClock || st.Answered != "gpt-y" {
		t.Fatalf("state = %+v, want the fallback over and remembered", st)
	}
	if !strings.Contains(ft.log.String(), "llm model answers again") {
		t.Fatalf("log does not say the model answers again:\n%s", ft.log)
	}
	assertStatus(t, ft.f, "✅ model gpt-x answering again since 12:03:04 UTC (last fallback: gpt-y, from 12:03:04 UTC, after HTTP 500)")
}

func TestFallbackNeverForAnInvalidRequest(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusUnauthorized} {
		ft := newFallbackTest(t, 3, "gpt-y")
		ft.s.FailModel("gpt-x", status)
		_, streamed, err := ft.chat("gpt-x", "hello")
		var pe *agentcore.ProviderError
		if !errors.As(err, &pe) || pe.Status != status || pe.Model != "gpt-x" {
			t.Fatalf("HTTP %d: err = %v; want gpt-x's own error", status, err)
		}
		var fe *agentcore.FallbackError
		if errors.As(err, &fe) || streamed != "" {
			t.Fatalf("HTTP %d: err = %v, streamed %q; want no fallback", status, err, streamed)
		}
		assertAsked(t, ft.s, "gpt-x")
		if st := ft.f.State(); st != (agentcore.FallbackState{}) {
			t.Fatalf("HTTP %d: state = %+v, want none", status, st)
		}
	}
}

func TestFallbackAfter429Retries(t *testing.T) {
	ft := newFallbackTest(t, 3, "gpt-y")
	ft.s.FailModel("gpt-x", http.StatusTooManyRequests)
	resp, _, err := ft.chat("gpt-x", "hello")
	if err != nil || resp.Model != "gpt-y" {
		t.Fatalf("Chat = %+v, %v; want gpt-y's answer", resp, err)
	}
	assertAsked(t, ft.s, "gpt-x", "gpt-x", "gpt-x", "gpt-y")
	if st := ft.f.State(); st.Reason != "HTTP 429" || st.Answered != "gpt-y" {
		t.Fatalf("state = %+v", st)
	}
}

// byModel sends a request for refused to a server that refuses the
// connection, and any other to live.
type byModel struct {
	refused string
	down    agentcore.Provider
	live    agentcore.Provider
}

func (b byModel) Name() string { return "openai" }

func (b byModel) Chat(ctx context.Context, req agentcore.Request, onText func(string)) (agentcore.Response, error) {
	if req.Model == b.refused {
		return b.down.Chat(ctx, req, onText)
	}
	return b.live.Chat(ctx, req, onText)
}

// refusedURL is a loopback base URL nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/v1"
}

func TestFallbackAfterRefusedConnection(t *testing.T) {
	s, live := newOpenAITest(t)
	down := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: refusedURL(t), Timeout: time.Minute})
	ft := wrapFallbacks(s, byModel{refused: "gpt-x", down: down, live: live}, 2, "gpt-y")
	resp, _, err := ft.chat("gpt-x", "hello")
	if err != nil || resp.Model != "gpt-y" || !strings.HasPrefix(resp.Content, "echo: hello") {
		t.Fatalf("Chat = %+v, %v; want gpt-y's answer", resp, err)
	}
	if st := ft.f.State(); st.Reason != "connection refused" || st.Failed != "gpt-x" {
		t.Fatalf("state = %+v, want gpt-x's refused connection", st)
	}
}

func TestFallbackAfterTimeout(t *testing.T) {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: s.URL(), Timeout: 300 * time.Millisecond})
	s.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == "gpt-x" {
			return llmtest.Reply{Text: "too late", Delay: time.Minute}
		}
		return llmtest.Echo(r)
	})
	ft := wrapFallbacks(s, p, 1, "gpt-y")
	resp, streamed, err := ft.chat("gpt-x", "hello")
	if err != nil || resp.Model != "gpt-y" || strings.Contains(streamed, "too late") {
		t.Fatalf("Chat = %+v, %v (streamed %q); want gpt-y's answer", resp, err, streamed)
	}
	if st := ft.f.State(); st.Reason != "timeout" {
		t.Fatalf("state = %+v, want a timeout", st)
	}
}

func TestFallbackAllFailNamesEachModel(t *testing.T) {
	ft := newFallbackTest(t, 1, "gpt-y", "gpt-x", "gpt-z")
	ft.s.FailModel("gpt-x", http.StatusInternalServerError)
	ft.s.FailModel("gpt-y", http.StatusServiceUnavailable)
	ft.s.FailModel("gpt-z", http.StatusBadGateway)
	_, streamed, err := ft.chat("gpt-x", "hello")
	var fe *agentcore.FallbackError
	if !errors.As(err, &fe) || strings.Join(fe.Models, ",") != "gpt-x,gpt-y,gpt-z" || streamed != "" {
		t.Fatalf("err = %v (streamed %q); want a FallbackError of gpt-x, gpt-y, gpt-z", err, streamed)
	}
	for _, s := range []string{"no model answered", "model gpt-x: openai: HTTP 500", "model gpt-y: openai: HTTP 503", "model gpt-z: openai: HTTP 502"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("err = %q, want it to say %q", err, s)
		}
	}
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || pe.Status != http.StatusBadGateway || pe.Model != "gpt-z" {
		t.Fatalf("err wraps %+v, want the last model's error", pe)
	}
	assertAsked(t, ft.s, "gpt-x", "gpt-y", "gpt-z") // the primary is not asked twice
	want := agentcore.FallbackState{Failed: "gpt-x", Reason: "HTTP 500", Since: fallbackClock, Active: true}
	if st := ft.f.State(); st != want {
		t.Fatalf("state = %+v, want %+v", st, want)
	}
	assertStatus(t, ft.f, "❌ model gpt-x failing (HTTP 500) and its fallbacks too since 12:03:04 UTC")
}

func TestFallbackPassesOverAnUnknownFallbackModel(t *testing.T) {
	ft := newFallbackTest(t, 1, "gpt-typo", "gpt-z")
	ft.s.FailModel("gpt-x", http.StatusInternalServerError)
	ft.s.FailModel("gpt-typo", http.StatusNotFound)
	resp, _, err := ft.chat("gpt-x", "hello")
	if err != nil || resp.Model != "gpt-z" {
		t.Fatalf("Chat = %+v, %v; want gpt-z's answer", resp, err)
	}
	assertAsked(t, ft.s, "gpt-x", "gpt-typo", "gpt-z")
}

// A model that streamed part of its answer and then failed is not
// followed by a fallback: what was streamed cannot be taken back.
func TestFallbackNotAfterStreamedText(t *testing.T) {
	ft := newFallbackTest(t, 1, "gpt-y")
	ft.s.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == "gpt-x" {
			return llmtest.Reply{Text: "half an ans", StreamError: "the server fell over"}
		}
		return llmtest.Echo(r)
	})
	_, streamed, err := ft.chat("gpt-x", "hello")
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "the server fell over") {
		t.Fatalf("err = %v, want gpt-x's stream error", err)
	}
	if streamed != "half an ans" {
		t.Fatalf("streamed %q, want only gpt-x's partial text", streamed)
	}
	assertAsked(t, ft.s, "gpt-x")
	if st := ft.f.State(); st != (agentcore.FallbackState{}) {
		t.Fatalf("state = %+v, want no fallback recorded", st)
	}
}
