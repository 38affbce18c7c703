package agentcore_test

import (
	"context"
	"encoding/json"
	"errors"
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

// anthReply is one scripted answer of anthServer.
type anthReply struct {
	status     int
	retryAfter string
	body       any
}

// anthServer speaks the /v1/messages format and records what it received.
type anthServer struct {
	t       *testing.T
	ts      *httptest.Server
	mu      sync.Mutex
	replies []anthReply
	bodies  []map[string]any
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

	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_test")
	if rep.retryAfter != "" {
		w.Header().Set("retry-after", rep.retryAfter)
	}
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	_ = json.NewEncoder(w).Encode(rep.body)
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
	if !reflect.DeepEqual(deltas, []string{"Hello world"}) {
		t.Fatalf("deltas = %q, want the whole text once", deltas)
	}
	body := s.requests()[0]
	if body["model"] != "claude-test" || body["max_tokens"] != float64(4096) {
		t.Fatalf("model = %v max_tokens = %v, want claude-test and the 4096 default", body["model"], body["max_tokens"])
	}
	wantSystem := jsonOf(t, []map[string]any{{"type": "text", "text": "be kind"}})
	if !reflect.DeepEqual(body["system"], wantSystem) {
		t.Fatalf("system = %v, want %v", body["system"], wantSystem)
	}
	wantMsgs := jsonOf(t, []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "hi"}}}})
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
		{"name": "datetime", "description": "time", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
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
		{"role": "user", "content": []map[string]any{{"type": "text", "text": "go"}}},
		{"role": "assistant", "content": []map[string]any{
			{"type": "text", "text": "calling"},
			{"type": "tool_use", "id": "t1", "name": "search", "input": map[string]any{"q": "x"}},
			{"type": "tool_use", "id": "t2", "name": "broken", "input": map[string]any{"invalid_arguments": "{not json"}},
		}},
		{"role": "user", "content": []map[string]any{
			{"type": "tool_result", "tool_use_id": "t1", "content": []map[string]any{{"type": "text", "text": "found"}}},
			{"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": []map[string]any{{"type": "text", "text": "bad arguments"}}},
			{"type": "text", "text": "and?"},
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
