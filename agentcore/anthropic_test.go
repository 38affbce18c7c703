package agentcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools"
)

// anthReply is one scripted answer of anthServer: an error answer (status
// set: body as JSON), a message (body) streamed as the API streams it, or
// the stream events given (events).
type anthReply struct {
	status     int
	retryAfter string
	body       any
	events     []map[string]any
}

// anthServer speaks the /v1/messages format and records what it received.
type anthServer struct {
	t       *testing.T
	ts      *httptest.Server
	mu      sync.Mutex
	replies []anthReply
	bodies  []map[string]any
	raws    [][]byte // the bodies as sent
	headers []http.Header
}

func newAnthServer(t *testing.T, replies ...anthReply) *anthServer {
	t.Helper()
	s := &anthServer{t: t, replies: replies}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.ts.Close)
	return s
}

func (s *anthServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Errorf("request body %s: %v", raw, err)
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.raws = append(s.raws, raw)
	s.headers = append(s.headers, r.Header.Clone())
	if len(s.replies) == 0 {
		s.mu.Unlock()
		s.t.Errorf("unscripted request %s", raw)
		http.Error(w, "unscripted", http.StatusInternalServerError)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()

	w.Header().Set("request-id", "req_test")
	if rep.retryAfter != "" {
		w.Header().Set("retry-after", rep.retryAfter)
	}
	if rep.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_ = json.NewEncoder(w).Encode(rep.body)
		return
	}
	if body["stream"] != true {
		s.t.Errorf("request does not ask for a stream: %s", raw)
	}
	events := rep.events
	if events == nil {
		events = anthStream(rep.body.(map[string]any))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range events {
		data, err := json.Marshal(ev)
		if err != nil {
			s.t.Errorf("event %v: %v", ev, err)
		}
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
		w.(http.Flusher).Flush()
	}
}

// anthStream is the stream of events in which the API sends msg (an
// anthMessage): text in pieces of a few characters, tool input in pieces
// of its JSON, input (and cache) tokens at the start and output tokens at
// the end.
func anthStream(msg map[string]any) []map[string]any {
	usage, _ := msg["usage"].(map[string]any)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	startUsage := map[string]any{"output_tokens": 1}
	for k, v := range usage {
		if k != "output_tokens" {
			startUsage[k] = v
		}
	}
	start["usage"] = startUsage
	events := []map[string]any{{"type": "message_start", "message": start}, {"type": "ping"}}
	blocks, _ := msg["content"].([]map[string]any)
	for i, b := range blocks {
		var first map[string]any
		var deltas []map[string]any
		switch b["type"] {
		case "text":
			first = map[string]any{"type": "text", "text": ""}
			for _, piece := range pieces(b["text"].(string), 3) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": piece})
			}
		case "tool_use":
			first = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			input, ok := b["input"].(string) // raw text, possibly not JSON
			if !ok {
				raw, _ := json.Marshal(b["input"])
				input = string(raw)
			}
			for _, piece := range pieces(input, 5) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": piece})
			}
		}
		events = append(events, map[string]any{"type": "content_block_start", "index": i, "content_block": first})
		for _, d := range deltas {
			events = append(events, map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		events = append(events, map[string]any{"type": "content_block_stop", "index": i})
	}
	return append(events,
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": usage["output_tokens"]}},
		map[string]any{"type": "message_stop"})
}

// pieces cuts s into pieces of n runes.
func pieces(s string, n int) []string {
	var out []string
	for r := []rune(s); len(r) > 0; {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// rawRequests returns the request bodies as they were sent.
func (s *anthServer) rawRequests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raws...)
}

func (s *anthServer) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

func anthMessage(stop string, content ...map[string]any) map[string]any {
	return map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 11, "output_tokens": 7},
	}
}

// ephemeral is the cache_control of a cache breakpoint on the wire.
var ephemeral = map[string]any{"type": "ephemeral"}

func anthError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func newAnthropicTest(s *anthServer, opts agentcore.AnthropicOptions) *agentcore.Anthropic {
	opts.BaseURL = s.ts.URL
	if opts.Model == "" {
		opts.Model = "claude-test"
	}
	if opts.APIKey == "" {
		opts.APIKey = "sk-ant-test-key"
	}
	return agentcore.NewAnthropic(opts)
}

// jsonOf round-trips v so it compares equal to decoded request bodies.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAnthropicTextReply(t *testing.T) {
	s := newAnthServer(t, anthReply{body: anthMessage("end_turn",
		map[string]any{"type": "text", "text": "Hello "},
		map[string]any{"type": "text", "text": "world"},
	)})
	p := newAnthropicTest(s, agentcore.AnthropicOptions{})
	var deltas []string
	resp, err := p.Chat(context.Background(), agentcore.Request{
		System:   "be kind",
		Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: "hi"}},
	}, func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != "Hello world" || resp.StopReason != "end_turn" || len(resp.ToolCalls) != 0 {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Usage != (agentcore.Usage{InputTokens: 11, OutputTokens: 7}) {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	// The text blocks stream in pieces of three characters; onText sees
	// the whole text so far each time.
	if want := []string{"Hel", "Hello ", "Hello wor", "Hello world"}; !reflect.DeepEqual(deltas, want) {
		t.Fatalf("onText saw %q, want the growing text %q", deltas, want)
	}
	body := s.requests()[0]
	if body["model"] != "claude-test" || body["max_tokens"] != float64(4096) {
		t.Fatalf("model = %v max_tokens = %v, want claude-test and the 4096 default", body["model"], body["max_tokens"])
	}
	wantSystem := jsonOf(t, []map[string]any{{"type": "text", "text": "be kind", "cache_control": ephemeral}})
	if !reflect.DeepEqual(body["system"], wantSystem) {
		t.Fatalf("system = %v, want %v", body["system"], wantSystem)
	}
	wantMsgs := jsonOf(t, []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "hi", "cache_control": ephemeral}}}})
	if !reflect.DeepEqual(body["messages"], wantMsgs) {
		t.Fatalf("messages = %v, want %v", body["messages"], wantMsgs)
	}
	h := s.headers[0]
	if !strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), "sk-ant-test-key") || h.Get("Anthropic-Version") == "" {
		t.Fatalf("headers = %v, want the key and an anthropic-version", h)
	}
	if p.Name() != "anthropic" {
		t.Fatalf("Name = %q", p.Name())
	}
}

func TestAnthropicToolUseReply(t *testing.T) {
	s := newAnthServer(t, anthReply{body: anthMessage("tool_use",
		map[string]any{"type": "text", "text": "Let me check."},
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": map[string]any{"city": "Oslo", "days": 2}},
		map[string]any{"type": "tool_use", "id": "toolu_2", "name": "datetime", "input": map[string]any{}},
	)})
	p := newAnthropicTest(s, agentcore.AnthropicOptions{MaxTokens: 100})
	resp, err := p.Chat(context.Background(), agentcore.Request{
		Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: "weather?"}},
		Tools: []tools.Spec{
			{Name: "weather", Description: "forecast", Parameters: json.RawMessage(
				`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)},
			{Name: "datetime", Description: "time"},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Let me check." || resp.StopReason != "tool_use" || len(resp.ToolCalls) != 2 {
		t.Fatalf("resp = %+v", resp)
	}
	c := resp.ToolCalls[0]
	var args map[string]any
	if err := json.Unmarshal(c.Arguments, &args); err != nil || c.ID != "toolu_1" || c.Name != "weather" ||
		args["city"] != "Oslo" || args["days"] != float64(2) {
		t.Fatalf("call 0 = %s %s %s", c.ID, c.Name, c.Arguments)
	}
	if c := resp.ToolCalls[1]; c.ID != "toolu_2" || c.Name != "datetime" || string(c.Arguments) != "{}" {
		t.Fatalf("call 1 = %s %s %s", c.ID, c.Name, c.Arguments)
	}

	body := s.requests()[0]
	if body["max_tokens"] != float64(100) {
		t.Fatalf("max_tokens = %v, want the option's 100", body["max_tokens"])
	}
	wantTools := jsonOf(t, []map[string]any{
		{"name": "weather", "description": "forecast", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []string{"city"}, "additionalProperties": false,
		}},
		{"name": "datetime", "description": "time", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}},
			"cache_control": ephemeral},
	})
	if !reflect.DeepEqual(body["tools"], wantTools) {
		t.Fatalf("tools = %v\nwant %v", body["tools"], wantTools)
	}
}

func TestAnthropicHistoryMapping(t *testing.T) {
	s := newAnthServer(t, anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "done"})})
	p := newAnthropicTest(s, agentcore.AnthropicOptions{})
	_, err := p.Chat(context.Background(), agentcore.Request{
		Model:     "claude-other",
		MaxTokens: 50,
		Messages: []agentcore.Message{
			{Role: agentcore.RoleUser, Content: "go"},
			{Role: agentcore.RoleAssistant, Content: "calling", ToolCalls: []agentcore.ToolCall{
				{ID: "t1", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)},
				{ID: "t2", Name: "broken", Arguments: json.RawMessage(`"{not json"`)},
			}},
			{Role: agentcore.RoleTool, ToolCallID: "t1", ToolName: "search", Content: "found"},
			{Role: agentcore.RoleTool, ToolCallID: "t2", ToolName: "broken", Content: "bad arguments", IsError: true},
			{Role: agentcore.RoleUser, Content: "and?"},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := s.requests()[0]
	if body["model"] != "claude-other" || body["max_tokens"] != float64(50) {
		t.Fatalf("model = %v max_tokens = %v", body["model"], body["max_tokens"])
	}
	want := jsonOf(t, []map[string]any{
		{"role": "user", "content": []map[string]any{{"type": "text", "text": "go", "cache_control": ephemeral}}},
		{"role": "assistant", "content": []map[string]any{
			{"type": "text", "text": "calling"},
			{"type": "tool_use", "id": "t1", "name": "search", "input": map[string]any{"q": "x"}},
			{"type": "tool_use", "id": "t2", "name": "broken", "input": map[string]any{"invalid_arguments": "{not json"}},
		}},
		{"role": "user", "content": []map[string]any{
			{"type": "tool_result", "tool_use_id": "t1", "content": []map[string]any{{"type": "text", "text": "found"}}},
			{"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": []map[string]any{{"type": "text", "text": "bad arguments"}}},
			{"type": "text", "text": "and?", "cache_control": ephemeral},
		}},
	})
	if !reflect.DeepEqual(body["messages"], want) {
		got, _ := json.MarshalIndent(body["messages"], "", " ")
		t.Fatalf("messages =\n%s", got)
	}
}

func TestAnthropicRateLimit(t *testing.T) {
	s := newAnthServer(t, anthReply{status: 429, retryAfter: "5", body: anthError("rate_limit_error", "slow down please")})
	p := newAnthropicTest(s, agentcore.AnthropicOptions{})
	_, err := p.Chat(context.Background(), agentcore.Request{Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: "hi"}}}, nil)
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *ProviderError", err)
	}
	if pe.Provider != "anthropic" || pe.Status != 429 || pe.RetryAfter != 5*time.Second || !pe.Retryable() {
		t.Fatalf("ProviderError = %+v", pe)
	}
	if !strings.Contains(err.Error(), "slow down please") {
		t.Fatalf("message = %q, want the server's message", err)
	}
	if n := len(s.requests()); n != 1 {
		t.Fatalf("server saw %d requests, want 1 (no SDK retries)", n)
	}
}

func TestAnthropicServerAndClientErrors(t *testing.T) {
	tests := []struct {
		status    int
		typ       string
		retryable bool
	}{
		{500, "api_error", true},
		{529, "overloaded_error", true},
		{400, "invalid_request_error", false},
		{401, "authentication_error", false},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			s := newAnthServer(t, anthReply{status: tt.status, body: anthError(tt.typ, "nope")})
			p := newAnthropicTest(s, agentcore.AnthropicOptions{APIKey: "sk-ant-secret-987"})
			_, err := p.Chat(context.Background(), agentcore.Request{Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: "hi"}}}, nil)
			var pe *agentcore.ProviderError
			if !errors.As(err, &pe) || pe.Status != tt.status || pe.Retryable() != tt.retryable {
				t.Fatalf("err = %v (%+v), want status %d retryable %v", err, pe, tt.status, tt.retryable)
			}
			if strings.Contains(err.Error(), "sk-ant-secret-987") {
				t.Fatalf("error leaks the key: %v", err)
			}
		})
	}
}

func TestAnthropicToolSchemasMappedOnEveryCallThatOffersThem(t *testing.T) {
	reply := anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "ok"})}
	s := newAnthServer(t, reply, reply)
	p := newAnthropicTest(s, agentcore.AnthropicOptions{})
	schema := `{"properties":{"q":{"type":"string"}},"required":["q",7]}`
	spec := tools.Spec{Name: "search", Parameters: json.RawMessage(schema)}
	for i := range 2 {
		_, err := p.Chat(context.Background(), agentcore.Request{
			Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: "hi"}},
			Tools:    []tools.Spec{spec},
		}, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i == 0 {
			copy(spec.Parameters, `{"type":"array",`) // the caller reuses its buffer: a new schema
			spec.Parameters = json.RawMessage(schema)
		}
	}
	want := jsonOf(t, map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []string{"q"}})
	for i, body := range s.requests() {
		list, _ := body["tools"].([]any)
		if len(list) != 1 || !reflect.DeepEqual(list[0].(map[string]any)["input_schema"], want) {
			t.Errorf("request %d tools = %v, want the mapped schema %v", i, body["tools"], want)
		}
	}
	for _, bad := range []string{`[1,2]`, `null `, `{"type":`} {
		for i := range 2 {
			_, err := p.Chat(context.Background(), agentcore.Request{
				Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: "hi"}},
				Tools:    []tools.Spec{{Name: "broken", Parameters: json.RawMessage(bad)}},
			}, nil)
			if err == nil || !strings.Contains(err.Error(), "tool broken: parameters are not a JSON schema object") {
				t.Errorf("schema %s, call %d: err = %v, want it refused", bad, i, err)
			}
		}
	}
	if n := len(s.requests()); n != 2 {
		t.Errorf("%d requests reached the server, want 2 (none with a broken schema)", n)
	}
}

// TestAnthropicToolInputNotJSON: a tool call whose streamed input is not
// JSON reaches the loop as a JSON string of the model's text, as before
// streaming, so the model can be told what it sent.
func TestAnthropicToolInputNotJSON(t *testing.T) {
	s := newAnthServer(t, anthReply{body: anthMessage("tool_use",
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": `{"city": "Os`},
		map[string]any{"type": "tool_use", "id": "toolu_2", "name": "datetime", "input": ""},
	)})
	p := newAnthropicTest(s, agentcore.AnthropicOptions{})
	resp, err := p.Chat(context.Background(), userReq("weather?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("resp = %+v, want two tool calls", resp)
	}
	var text string
	if c := resp.ToolCalls[0]; json.Unmarshal(c.Arguments, &text) != nil || text != `{"city": "Os` || c.Name != "weather" {
		t.Errorf("call 0 arguments = %s, want the model's text as a JSON string", c.Arguments)
	}
	if c := resp.ToolCalls[1]; string(c.Arguments) != "{}" {
		t.Errorf("call 1 arguments = %s, want {} for no input", c.Arguments)
	}
}

// TestAnthropicErrorInsideStream: an error event mid-stream is a
// retryable ProviderError with the server's message, and the text shown
// before it stays what onText saw last.
func TestAnthropicErrorInsideStream(t *testing.T) {
	events := anthStream(anthMessage("end_turn", map[string]any{"type": "text", "text": "half an answer"}))
	var cut []map[string]any
	for _, ev := range events {
		if ev["type"] == "content_block_stop" {
			break
		}
		cut = append(cut, ev)
	}
	cut = append(cut, anthError("overloaded_error", "Overloaded right now"))
	s := newAnthServer(t, anthReply{events: cut})
	p := newAnthropicTest(s, agentcore.AnthropicOptions{})
	var shown []string
	resp, err := p.Chat(context.Background(), userReq("hi"), func(soFar string) { shown = append(shown, soFar) })
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Overloaded right now") {
		t.Fatalf("Chat = %+v, %v; want the stream's error", resp, err)
	}
	if !pe.Retryable() || pe.Provider != "anthropic" || pe.Status != 529 || !strings.Contains(err.Error(), "mid-stream") {
		t.Fatalf("mid-stream failure %+v not a retryable anthropic error", pe)
	}
	if len(shown) < 2 || shown[len(shown)-1] != "half an answer" {
		t.Fatalf("onText saw %q, want the text growing to %q", shown, "half an answer")
	}
}

// TestAnthropicStreamCutOff: a stream that ends before message_stop, or
// has no events at all, is a retryable ProviderError, not a short reply.
func TestAnthropicStreamCutOff(t *testing.T) {
	events := anthStream(anthMessage("end_turn", map[string]any{"type": "text", "text": "cut"}))
	for _, tt := range []struct {
		name   string
		events []map[string]any
		want   string
	}{
		{"before message_stop", events[:len(events)-2], "ended before the model finished"},
		{"no events", []map[string]any{}, "empty stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newAnthServer(t, anthReply{events: tt.events})
			p := newAnthropicTest(s, agentcore.AnthropicOptions{})
			_, err := p.Chat(context.Background(), userReq("hi"), nil)
			var pe *agentcore.ProviderError
			if !errors.As(err, &pe) || !pe.Retryable() || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a retryable ProviderError saying %q", err, tt.want)
			}
		})
	}
}

// TestAnthropicTimeoutMidStream: Timeout bounds the whole call, the
// stream's body included.
func TestAnthropicTimeoutMidStream(t *testing.T) {
	start := anthStream(anthMessage("end_turn", map[string]any{"type": "text", "text": "slow"}))[:4]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range start {
			data, _ := json.Marshal(ev)
			_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the model never goes on
	}))
	defer ts.Close()
	p := agentcore.NewAnthropic(agentcore.AnthropicOptions{BaseURL: ts.URL, APIKey: "k", Model: "m", Timeout: 300 * time.Millisecond})
	var shown string
	began := time.Now()
	_, err := p.Chat(context.Background(), userReq("hi"), func(soFar string) { shown = soFar })
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || !pe.Retryable() || !strings.Contains(err.Error(), "did not finish answering within 300ms") {
		t.Fatalf("err = %v, want a retryable ProviderError naming the timeout", err)
	}
	if elapsed := time.Since(began); elapsed > 5*time.Second {
		t.Errorf("Chat took %v with a 300ms timeout", elapsed)
	}
	if shown != "slo" {
		t.Errorf("onText saw %q before the stall, want %q", shown, "slo")
	}
}
