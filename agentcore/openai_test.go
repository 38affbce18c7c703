package agentcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/tools"
)

func newOpenAITest(t *testing.T) (*llmtest.Server, *agentcore.OpenAI) {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	return s, agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: s.URL(), Model: "test-model", Timeout: time.Minute})
}

func userReq(text string) agentcore.Request {
	return agentcore.Request{Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: text}}}
}

func TestOpenAIPlainText(t *testing.T) {
	s, p := newOpenAITest(t)
	req := userReq("hello there")
	req.System = "you are a test"
	req.MaxTokens = 64
	resp, err := p.Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if want := "echo: hello there (history: 1 user messages)"; resp.Content != want {
		t.Fatalf("content = %q, want %q", resp.Content, want)
	}
	if resp.StopReason != "stop" || len(resp.ToolCalls) != 0 {
		t.Fatalf("stop = %q, calls = %v", resp.StopReason, resp.ToolCalls)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Fatalf("usage = %+v, want the final usage chunk's numbers", resp.Usage)
	}
	got := s.Requests()[0]
	if got.Model != "test-model" || !got.Stream || got.MaxTokens != 64 {
		t.Fatalf("request model=%q stream=%v max=%d", got.Model, got.Stream, got.MaxTokens)
	}
	if len(got.Messages) != 2 || got.Messages[0].Role != "system" || got.Messages[0].Content != "you are a test" {
		t.Fatalf("messages = %+v, want the system prompt first", got.Messages)
	}
	if p.Name() != "openai" {
		t.Fatalf("Name = %q", p.Name())
	}
}

func TestOpenAIRequestModelWins(t *testing.T) {
	s, p := newOpenAITest(t)
	req := userReq("hi")
	req.Model = "other"
	if _, err := p.Chat(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Requests()[0].Model; got != "other" {
		t.Fatalf("model = %q, want other", got)
	}
}

func TestOpenAIStreamingTextSoFar(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Enqueue(llmtest.Reply{Text: "the quick brown fox"})
	var seen []string
	resp, err := p.Chat(context.Background(), userReq("hi"), func(soFar string) { seen = append(seen, soFar) })
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[len(seen)-1] != "the quick brown fox" {
		t.Fatalf("text so far = %q, want it to grow to the whole text", seen)
	}
	for i := 1; i < len(seen); i++ {
		if !strings.HasPrefix(seen[i], seen[i-1]) || seen[i] == seen[i-1] {
			t.Fatalf("text so far = %q: each must extend the one before", seen)
		}
	}
	if resp.Content != "the quick brown fox" {
		t.Fatalf("content = %q", resp.Content)
	}
}

func TestOpenAIToolCallAccumulated(t *testing.T) {
	s, p := newOpenAITest(t)
	args := `{"query":"weather in Zürich","limit":3,"nested":{"ok":true}}`
	s.Enqueue(llmtest.Reply{Text: "let me look", ToolCalls: []llmtest.ToolCall{
		{ID: "call_search", Name: "search", Arguments: args},
		{ID: "call_time", Name: "datetime", Arguments: ""},
	}})
	req := userReq("weather?")
	req.Tools = []tools.Spec{
		{Name: "search", Description: "searches", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
		{Name: "datetime", Description: "tells the time"},
	}
	resp, err := p.Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v, want 2", resp.ToolCalls)
	}
	c := resp.ToolCalls[0]
	if c.ID != "call_search" || c.Name != "search" || string(c.Arguments) != args {
		t.Fatalf("call 0 = %s %s %s", c.ID, c.Name, c.Arguments)
	}
	if c := resp.ToolCalls[1]; c.ID != "call_time" || c.Name != "datetime" || string(c.Arguments) != "{}" {
		t.Fatalf("call 1 = %s %s %s, want empty arguments as {}", c.ID, c.Name, c.Arguments)
	}
	if resp.Content != "let me look" || resp.StopReason != "tool_calls" {
		t.Fatalf("content = %q stop = %q", resp.Content, resp.StopReason)
	}

	// the tools went out as function tools with their schema
	var body struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(s.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 2 || body.Tools[0].Type != "function" || body.Tools[0].Function.Description != "searches" {
		t.Fatalf("tools on the wire = %+v", body.Tools)
	}
	var schema map[string]any
	if err := json.Unmarshal(body.Tools[0].Function.Parameters, &schema); err != nil || schema["required"] == nil {
		t.Fatalf("schema on the wire = %s", body.Tools[0].Function.Parameters)
	}
	if err := json.Unmarshal(body.Tools[1].Function.Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("empty schema went out as %s, want an object schema", body.Tools[1].Function.Parameters)
	}
}

func TestOpenAIInvalidArgumentsKeptAsString(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "search", Arguments: `{"query": "unterminated`}}})
	resp, err := p.Chat(context.Background(), userReq("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var s2 string
	if err := json.Unmarshal(resp.ToolCalls[0].Arguments, &s2); err != nil || s2 != `{"query": "unterminated` {
		t.Fatalf("arguments = %s, want the invalid text as a JSON string", resp.ToolCalls[0].Arguments)
	}

	// sent back in history, the original text goes out again
	history := agentcore.Request{Messages: []agentcore.Message{
		{Role: agentcore.RoleUser, Content: "x"},
		{Role: agentcore.RoleAssistant, ToolCalls: resp.ToolCalls},
		{Role: agentcore.RoleTool, ToolCallID: "c1", ToolName: "search", Content: "invalid arguments", IsError: true},
	}}
	if _, err := p.Chat(context.Background(), history, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Requests()[1].Messages[1].ToolCalls[0].Arguments; got != `{"query": "unterminated` {
		t.Fatalf("arguments sent back = %q", got)
	}
}

func TestOpenAIHistoryWireShape(t *testing.T) {
	s, p := newOpenAITest(t)
	req := agentcore.Request{
		System: "sys",
		Messages: []agentcore.Message{
			{Role: agentcore.RoleUser, Content: "first"},
			{Role: agentcore.RoleAssistant, Content: "checking", ToolCalls: []agentcore.ToolCall{
				{ID: "call_1", Name: "datetime", Arguments: json.RawMessage(`{}`)},
				{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)},
			}},
			{Role: agentcore.RoleTool, ToolCallID: "call_1", ToolName: "datetime", Content: "noon"},
			{Role: agentcore.RoleTool, ToolCallID: "call_2", ToolName: "search", Content: "boom", IsError: true},
		},
	}
	resp, err := p.Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "tool datetime said: noon\ntool search said: boom" {
		t.Fatalf("content = %q", resp.Content)
	}
	got := s.Requests()[0].Messages
	if len(got) != 5 {
		t.Fatalf("messages = %+v", got)
	}
	a := got[2]
	if a.Role != "assistant" || a.Content != "checking" || len(a.ToolCalls) != 2 ||
		a.ToolCalls[1].ID != "call_2" || a.ToolCalls[1].Name != "search" || a.ToolCalls[1].Arguments != `{"q":"go"}` {
		t.Fatalf("assistant message = %+v", a)
	}
	if got[3].Role != "tool" || got[3].ToolCallID != "call_1" || got[3].Content != "noon" ||
		got[4].Role != "tool" || got[4].ToolCallID != "call_2" {
		t.Fatalf("tool messages = %+v %+v", got[3], got[4])
	}

	// an assistant message with only tool calls has no content on the wire
	var body struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	req.Messages[1].Content = ""
	if _, err := p.Chat(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(s.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if c, ok := body.Messages[2]["content"]; ok && string(c) != "null" {
		t.Fatalf("assistant content = %s, want none", c)
	}
	if string(body.Messages[2]["role"]) != `"assistant"` || body.Messages[2]["tool_calls"] == nil {
		t.Fatalf("assistant message = %v", body.Messages[2])
	}
}

func TestOpenAIRateLimit(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Enqueue(llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: 3})
	_, err := p.Chat(context.Background(), userReq("hi"), nil)
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *ProviderError", err)
	}
	if pe.Provider != "openai" || pe.Status != 429 || pe.RetryAfter != 3*time.Second || !pe.Retryable() {
		t.Fatalf("ProviderError = %+v", pe)
	}
	if !strings.Contains(err.Error(), "scripted failure") || !strings.Contains(err.Error(), "try again") {
		t.Fatalf("message = %q, want the server's message and what to do", err)
	}
}

func TestOpenAIServerErrorRetryable(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Fail(http.StatusInternalServerError, 1)
	_, err := p.Chat(context.Background(), userReq("hi"), nil)
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || !pe.Retryable() {
		t.Fatalf("err = %v, want a retryable 500", err)
	}
}

func TestOpenAIBadRequestNotRetryable(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Fail(http.StatusBadRequest, 1)
	_, err := p.Chat(context.Background(), userReq("hi"), nil)
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Retryable() {
		t.Fatalf("err = %v, want a non-retryable 400", err)
	}
}

func TestOpenAIUnauthorizedSaysWhatToDo(t *testing.T) {
	s, _ := newOpenAITest(t)
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: s.URL(), APIKey: "sk-secret-1234", Model: "m"})
	s.Fail(http.StatusUnauthorized, 1)
	_, err := p.Chat(context.Background(), userReq("hi"), nil)
	if err == nil || !strings.Contains(err.Error(), "llm.api_key") || strings.Contains(err.Error(), "sk-secret-1234") {
		t.Fatalf("err = %v, want a hint at llm.api_key and no key", err)
	}
}

func TestOpenAIErrorInsideStream(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Enqueue(llmtest.Reply{Text: "half an", StreamError: "upstream overloaded"})
	var shown string
	resp, err := p.Chat(context.Background(), userReq("hi"), func(soFar string) { shown = soFar })
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "upstream overloaded") {
		t.Fatalf("Chat = %+v, %v; want the stream's error", resp, err)
	}
	if !pe.Retryable() {
		t.Fatalf("mid-stream failure %+v not retryable", pe)
	}
	if shown != "half an" {
		t.Fatalf("text before the error = %q", shown)
	}
}

func TestOpenAIIncompleteStreams(t *testing.T) {
	tests := []struct {
		name, contentType, body, want string
	}{
		{"cut before finish", "text/event-stream",
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}` + "\n\n",
			"ended before the model finished"},
		{"not a stream", "application/json", `{"id":"c","object":"chat.completion","choices":[]}`, "empty stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer ts.Close()
			p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: ts.URL + "/v1", Model: "m"})
			_, err := p.Chat(context.Background(), userReq("hi"), nil)
			var pe *agentcore.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a ProviderError saying %q", err, tt.want)
			}
		})
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	s := llmtest.NewServer()
	url := s.URL()
	s.Close()
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: url, Model: "m"})
	_, err := p.Chat(context.Background(), userReq("hi"), nil)
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || pe.Status != 0 || !pe.Retryable() || !strings.Contains(err.Error(), "llm.base_url") {
		t.Fatalf("err = %v, want a retryable transport failure naming llm.base_url", err)
	}
}

func TestOpenAICancelledNotRetryable(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Enqueue(llmtest.Reply{Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Chat(ctx, userReq("hi"), nil)
		done <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond) // poll until the server holds the request
	}
	cancel()
	err := <-done
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || pe.Retryable() || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a non-retryable cancellation", err)
	}
}

func TestOpenAIWithRetryRecovers(t *testing.T) {
	s, p := newOpenAITest(t)
	s.Fail(http.StatusTooManyRequests, 2)
	var slept []time.Duration
	r := agentcore.WithRetry(p, agentcore.RetryOptions{Sleep: func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}})
	resp, err := r.Chat(context.Background(), userReq("hi"), nil)
	if err != nil || !strings.HasPrefix(resp.Content, "echo: hi") {
		t.Fatalf("Chat = %+v, %v", resp, err)
	}
	if len(s.Requests()) != 3 || len(slept) != 2 {
		t.Fatalf("requests = %d, sleeps = %d; want 3 and 2", len(s.Requests()), len(slept))
	}
}

func TestOpenAIUnknownRole(t *testing.T) {
	_, p := newOpenAITest(t)
	_, err := p.Chat(context.Background(), agentcore.Request{Messages: []agentcore.Message{{Role: "robot", Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "robot") {
		t.Fatalf("err = %v, want the unknown role named", err)
	}
}

func TestOpenAIKeyHandling(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	var auth []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	for _, key := range []string{"", "sk-configured"} {
		p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: ts.URL + "/v1", APIKey: key, Model: "m"})
		if resp, err := p.Chat(context.Background(), userReq("hi"), nil); err != nil || resp.Content != "ok" {
			t.Fatalf("key %q: Chat = %+v, %v", key, resp, err)
		}
	}
	if len(auth) != 2 || auth[0] == "" || strings.Contains(auth[0], "sk-from-env") || auth[1] != "Bearer sk-configured" {
		t.Fatalf("Authorization headers = %q, want a placeholder then the configured key, never the environment's", auth)
	}
}

// streamServer answers every call with status and body as an event stream.
func streamServer(t *testing.T, status int, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

func TestOpenAIBrokenStreams(t *testing.T) {
	const ok = `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}` + "\n\n"
	tests := []struct {
		name, body  string
		status      int
		wantErr     string // "" means the call succeeds with content "ok"
		wantStatus  int
		wantRetries bool
	}{
		{"event is broken JSON", `data: {"choices":[{"delta":` + "\n\n", 200, "not JSON", 0, true},
		{"field of an unexpected type is ignored", `data: {"usage":"n/a","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}` + "\n\n", 200, "", 0, false},
		{"DONE ends the stream", ok + "data: [DONE]\n\ndata: {not read\n\n", 200, "", 0, false},
		{"error event with an HTTP code", `data: {"error":{"message":"model overloaded","code":503}}` + "\n\n", 200, "model overloaded", 503, true},
		{"proxy's HTML error page", "<html><body><h1>502 Bad Gateway</h1>\n</body></html>", 502, "502 Bad Gateway", 502, true},
		{"plain-text 404", "404 page not found", 404, "llm.model and llm.base_url: 404 page not found", 404, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: streamServer(t, tt.status, tt.body), Model: "m"})
			resp, err := p.Chat(context.Background(), userReq("hi"), nil)
			if tt.wantErr == "" {
				if err != nil || resp.Content != "ok" {
					t.Fatalf("Chat = %+v, %v; want content ok", resp, err)
				}
				return
			}
			var pe *agentcore.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.wantErr) || pe.Status != tt.wantStatus || pe.Retryable() != tt.wantRetries {
				t.Fatalf("err = %v (%+v); want a ProviderError with %q, status %d, retryable %v", err, pe, tt.wantErr, tt.wantStatus, tt.wantRetries)
			}
		})
	}
}

func TestOpenAITimeoutNamesTheSetting(t *testing.T) {
	s, _ := newOpenAITest(t)
	s.Enqueue(llmtest.Reply{Delay: time.Hour})
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: s.URL(), Model: "m", Timeout: 100 * time.Millisecond})
	_, err := p.Chat(context.Background(), userReq("hi"), nil)
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || !pe.Retryable() || !strings.Contains(err.Error(), "llm.timeout") {
		t.Fatalf("err = %v, want a retryable failure naming llm.timeout", err)
	}
}

func TestEmbedderRetriesOnceAndSaysWhatToDo(t *testing.T) {
	var calls []string
	status := []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusUnauthorized, http.StatusUnauthorized}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		calls = append(calls, r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(raw))
		st := status[0]
		status = status[1:]
		if st != http.StatusOK {
			http.Error(w, `{"error":{"message":"nope sk-emb-secret"}}`, st)
			return
		}
		_, _ = io.WriteString(w, `{"data":[{"index":1,"embedding":[0.5,1]},{"index":0,"embedding":[2]}]}`)
	}))
	defer ts.Close()
	var logs strings.Builder
	e := agentcore.NewEmbedder(agentcore.EmbedderOptions{BaseURL: ts.URL + "/v1", APIKey: "sk-emb-secret", Model: "emb",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	got, err := e.Embed(context.Background(), []string{"a", "b"})
	if err != nil || len(got) != 2 || len(got[0]) != 1 || got[0][0] != 2 || got[1][1] != 1 {
		t.Fatalf("Embed = %v, %v; want the vectors in input order", got, err)
	}
	if len(calls) != 2 || calls[1] != `/v1/embeddings Bearer sk-emb-secret {"input":["a","b"],"model":"emb"}` {
		t.Fatalf("calls = %q, want a 503 then one retry with the same request", calls)
	}
	if n := strings.Count(logs.String(), "llm call failed, retrying"); n != 1 || strings.Contains(logs.String(), "sk-emb-secret") {
		t.Errorf("the retry logged %d warnings (want 1, through the given logger, without the key):\n%s", n, logs.String())
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "llm.api_key") || strings.Contains(err.Error(), "sk-emb-secret") || len(calls) != 3 {
		t.Fatalf("err = %v after %d calls; want one call, a hint at the key and no key", err, len(calls))
	}
}

func TestOpenAIToolSchemasCheckedOnEveryCallThatOffersThem(t *testing.T) {
	s, p := newOpenAITest(t)
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	good := tools.Spec{Name: "search", Parameters: slices.Clone(schema)}
	for i := range 2 {
		s.Enqueue(llmtest.Reply{Text: "ok"})
		req := userReq("hi")
		req.Tools = []tools.Spec{good}
		if _, err := p.Chat(context.Background(), req, nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i == 0 {
			copy(good.Parameters, `{"type":"array" `) // the caller reuses its buffer: a new schema
			good.Parameters = slices.Clone(schema)
		}
	}
	for i, r := range s.Requests() {
		var body struct {
			Tools []struct {
				Function struct {
					Parameters json.RawMessage `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Tools) != 1 {
			t.Fatalf("request %d: %v, tools %d", i, err, len(body.Tools))
		}
		if got := string(body.Tools[0].Function.Parameters); got != string(schema) {
			t.Errorf("request %d sent parameters %s, want %s", i, got, schema)
		}
	}
	for _, bad := range []string{`[1,2]`, `null `, `{"type":`} {
		for i := range 2 {
			req := userReq("hi")
			req.Tools = []tools.Spec{{Name: "broken", Parameters: json.RawMessage(bad)}}
			_, err := p.Chat(context.Background(), req, nil)
			if err == nil || !strings.Contains(err.Error(), "tool broken: parameters are not a JSON schema object") {
				t.Errorf("schema %s, call %d: err = %v, want it refused", bad, i, err)
			}
		}
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests reached the server, want 2 (none with a broken schema)", n)
	}
}

// TestOpenAIKeepsConnectionsForConcurrentCalls checks that calls made at
// the same time reuse their connections in the next round instead of each
// opening (and, against a real server, handshaking) a new one.
func TestOpenAIKeepsConnectionsForConcurrentCalls(t *testing.T) {
	const parallel, rounds = 8, 3
	arrived, proceed := make(chan struct{}), make(chan struct{})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-proceed
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	var mu sync.Mutex
	opened := 0
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: ts.URL + "/v1", Model: "m", Timeout: time.Minute})
	for round := range rounds {
		errs := make(chan error, parallel)
		for range parallel {
			go func() {
				_, err := p.Chat(context.Background(), userReq("hi"), nil)
				errs <- err
			}()
		}
		for range parallel { // all calls are open at once before any is answered
			<-arrived
		}
		for range parallel {
			proceed <- struct{}{}
		}
		for range parallel {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if opened != parallel {
		t.Errorf("%d rounds of %d calls at once opened %d connections, want %d (one per call of a round, reused after)", rounds, parallel, opened, parallel)
	}
}

// TestOpenAICallsSentWholeAtOneIndex: servers that send every tool call
// whole at index 0, each with its own id, have each call kept, arguments
// the model broke included.
func TestOpenAICallsSentWholeAtOneIndex(t *testing.T) {
	url := streamServer(t, http.StatusOK,
		`data: {"id":"a","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"datetime","arguments":"{}"}}]}}]}`+"\n\n"+
			`data: {"id":"b","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"search","arguments":"{bad"}}]},"finish_reason":"tool_calls"}]}`+"\n\n")
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: url, Model: "m"})
	resp, err := p.Chat(context.Background(), userReq("hi"), nil)
	if err != nil || len(resp.ToolCalls) != 2 {
		t.Fatalf("Chat = %+v, %v; want two calls", resp, err)
	}
	if c := resp.ToolCalls[0]; c.ID != "c1" || c.Name != "datetime" || string(c.Arguments) != "{}" {
		t.Errorf("call 0 = %s %s %s", c.ID, c.Name, c.Arguments)
	}
	if c := resp.ToolCalls[1]; c.ID != "c2" || c.Name != "search" || string(c.Arguments) != `"{bad"` {
		t.Errorf("call 1 = %s %s %s, want the broken arguments as a JSON string", c.ID, c.Name, c.Arguments)
	}
}
