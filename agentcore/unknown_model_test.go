package agentcore_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestUnknownModelAnswers: the ways servers say "no such model" make a
// ProviderError that says so (UnknownModel) and carries the body's code;
// other refusals do not.
func TestUnknownModelAnswers(t *testing.T) {
	tests := []struct {
		name, provider string
		status         int
		body, code     string
		unknown        bool
	}{
		{"openai", "openai", 404, `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, "model_not_found", true},
		{"ollama", "openai", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`, "", true},
		{"anthropic", "anthropic", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`, "not_found_error", true},
		{"compatible server, 400", "openai", 400, `{"error":{"message":"model 'x' does not exist","type":"invalid_request_error","code":null}}`, "invalid_request_error", true},
		{"code on a 400", "openai", 400, `{"error":{"message":"no","code":"model_not_found"}}`, "model_not_found", true},
		{"another 400", "openai", 400, `{"error":{"message":"messages: field required","type":"invalid_request_error"}}`, "invalid_request_error", false},
		{"a 500 naming the model", "openai", 500, `{"error":{"message":"model unknown failure"}}`, "", false},
		{"rate limited", "openai", 429, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`, "rate_limit_exceeded", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer ts.Close()
			var p agentcore.Provider = agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: ts.URL + "/v1", Model: "m"})
			if tt.provider == "anthropic" {
				p = agentcore.NewAnthropic(agentcore.AnthropicOptions{BaseURL: ts.URL, APIKey: "k", Model: "m"})
			}
			_, err := p.Chat(context.Background(), userReq("hi"), nil)
			var pe *agentcore.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a ProviderError", err)
			}
			if pe.UnknownModel() != tt.unknown || pe.Code != tt.code {
				t.Fatalf("UnknownModel() = %v, Code = %q (err %v); want %v, %q", pe.UnknownModel(), pe.Code, err, tt.unknown, tt.code)
			}
		})
	}
}

// TestRunErrorNamesTheModel: a failed model call's ProviderError says
// which model the agent asked for, so the person can be told what to fix.
func TestRunErrorNamesTheModel(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	llm.Fail(http.StatusNotFound, 1)
	a := newAgent(t, llm, db)
	a.Model = "gpt-9"
	_, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:model", User: &agentcore.Message{Content: "hi", ExternalID: "u1"}})
	var pe *agentcore.ProviderError
	if !errors.As(err, &pe) || pe.Model != "gpt-9" || !pe.UnknownModel() {
		t.Fatalf("err = %v (%+v), want an unknown-model ProviderError naming gpt-9", err, pe)
	}
}
