package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// TestLeanModelAnswersWhatLLMTestEchoes sends the daemon's own provider's
// requests to both fakes and wants the same reply text from each.
func TestLeanModelAnswersWhatLLMTestEchoes(t *testing.T) {
	lean := newLeanModel()
	defer lean.Close()
	full := llmtest.NewServer()
	defer full.Close()
	req := agentcore.Request{
		System: `You answer. A user once wrote {"role":"user","content":"m999"} here.`,
		Messages: []agentcore.Message{
			{Role: agentcore.RoleUser, Content: "m1"},
			{Role: agentcore.RoleAssistant, Content: `echo: m1 {"role":"user","content":"m998"}`},
			{Role: agentcore.RoleUser, Content: `m42 "quoted" \ back\slash, ünïcode`},
		},
		Tools: []tools.Spec{{Name: "datetime", Description: "time", Parameters: []byte(`{"type":"object","properties":{"role":{"type":"string","enum":["user"]}}}`)}},
	}
	answer := func(url string) agentcore.Response {
		t.Helper()
		p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: url, Model: "test-model", Timeout: time.Minute})
		resp, err := p.Chat(context.Background(), req, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		return resp
	}
	got, want := answer(lean.URL()), answer(full.URL())
	if got.Content != want.Content || !strings.HasPrefix(got.Content, `echo: m42 "quoted"`) {
		t.Errorf("lean model said %q, llmtest %q", got.Content, want.Content)
	}
	if got.StopReason != want.StopReason || got.Usage.OutputTokens == 0 {
		t.Errorf("lean model: stop %q, usage %+v; llmtest: stop %q", got.StopReason, got.Usage, want.StopReason)
	}
	if idx, ok := replyIndex(got.Content); !ok || idx != 42 {
		t.Errorf("replyIndex(%q) = %d, %v; want 42", got.Content, idx, ok)
	}
	if n, why := lean.complaints(); n != 0 {
		t.Errorf("the lean model refused %d requests: %s", n, why)
	}
}

func TestLeanModelRefusesWhatItCannotRead(t *testing.T) {
	lean := newLeanModel()
	defer lean.Close()
	big := `{"model":"m","stream":true,"messages":[{"role":"user","content":"m1 ` + strings.Repeat("x", maxRequest) + `"}]}`
	const path, json = "/chat/completions", "application/json"
	wantRefused(t, lean.URL(), lean.complaints, map[string]refusal{
		"no messages":      {path, json, `{"model":"m","stream":true}`, http.StatusBadRequest},
		"not streamed":     {path, json, `{"model":"m","messages":[{"role":"user","content":"m1"}],"stream":false}`, http.StatusBadRequest},
		"no user text":     {path, json, `{"model":"m","messages":[{"role":"system","content":"m1"}],"stream":true}`, http.StatusBadRequest},
		"content unclosed": {path, json, `{"model":"m","stream":true,"messages":[{"role":"user","content":"m1\"}]}`, http.StatusBadRequest},
		"bad escape":       {path, json, `{"model":"m","stream":true,"messages":[{"role":"user","content":"m1\q"}]}`, http.StatusBadRequest},
		// Not an answer made from the part that was read.
		"larger than read": {path, json, big, http.StatusRequestEntityTooLarge},
	})
	if n, _ := (*leanModel)(nil).complaints(); n != 0 {
		t.Errorf("a nil fake has %d complaints", n)
	}
}

// A summary request echoes a whole transcript; like a model, the lean fake
// stops at the answer's bound.
func TestLeanModelStopsAtMaxTokens(t *testing.T) {
	lean := newLeanModel()
	defer lean.Close()
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: lean.URL(), Model: "test-model", Timeout: time.Minute})
	long := strings.Repeat("word ", 500)
	for limit, want := range map[int]int{3: 3, 0: 505} { // "echo:", 500 words, "(history: 1 user messages)"
		resp, err := p.Chat(context.Background(), agentcore.Request{MaxTokens: limit,
			Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: long}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(strings.Fields(resp.Content)); got != want || (limit > 0 && resp.Usage.OutputTokens != limit) {
			t.Errorf("max tokens %d: answer of %d words, %d output tokens; want %d words", limit, got, resp.Usage.OutputTokens, want)
		}
	}
}
