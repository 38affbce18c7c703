package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/config"
)

// TestCheckLLMAnthropicListsEveryModel: for Anthropic, doctor asks
// /v1/models with its key headers and for a page big enough to hold every
// model (20 to a page otherwise), and compares the model with it.
func TestCheckLLMAnthropicListsEveryModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("x-api-key") != "k" || r.Header.Get("anthropic-version") == "" {
			http.Error(w, `{"type":"error"}`, http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("limit") != "1000" {
			_, _ = w.Write([]byte(`{"data":[{"id":"claude-3-haiku-20240307"}],"has_more":true}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":"claude-3-haiku-20240307"},{"id":"claude-sonnet-4-5-20250929"}],"has_more":false}`))
	}))
	defer srv.Close()
	l := config.LLM{Provider: "anthropic", BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5-20250929"}
	if detail, err := checkLLM(context.Background(), l, "llm.model"); err != nil || !strings.Contains(detail, "listed") {
		t.Fatalf("listed model: %q, %v", detail, err)
	}
	l.Model = "claude-sonnet-4-5"
	_, err := checkLLM(context.Background(), l, "llm.model")
	var warn doctorWarning
	if !errors.As(err, &warn) || !strings.Contains(err.Error(), "did you mean claude-sonnet-4-5-20250929?") {
		t.Fatalf("unlisted model: %v", err)
	}
}

// TestHasModelTakesOllamasLatest: Ollama lists "name:latest" and runs it
// for "name", so that is no unknown model.
func TestHasModelTakesOllamasLatest(t *testing.T) {
	if !hasModel([]string{"llama3.2:latest"}, "llama3.2") || hasModel([]string{"llama3.2:1b"}, "llama3.2") {
		t.Fatal("hasModel")
	}
}

// TestCheckLLMChecksFallbacks: doctor compares each of llm.fallbacks with
// the same model list as llm.model, and warns about one the server lacks.
func TestCheckLLMChecksFallbacks(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.SetModels("gpt-x", "gpt-y", "gpt-z")
	l := config.LLM{BaseURL: srv.URL(), Model: "gpt-x", Fallbacks: []string{"gpt-y", "gpt-z"}}
	if detail, err := checkLLM(context.Background(), l, "llm.model"); err != nil || !strings.Contains(detail, "model gpt-x listed; fallbacks gpt-y, gpt-z listed") {
		t.Fatalf("listed fallbacks: %q, %v", detail, err)
	}
	l.Fallbacks = []string{"gpt-z", "gpt-yy"}
	_, err := checkLLM(context.Background(), l, "llm.model")
	var warn doctorWarning
	if !errors.As(err, &warn) || !strings.Contains(err.Error(), `llm.fallbacks "gpt-yy" is not in its list of models (did you mean gpt-y?)`) ||
		strings.Contains(err.Error(), `"gpt-z"`) {
		t.Fatalf("unlisted fallback: %v", err)
	}
}

// TestDoctorChecksEachModelsEntry: every models: entry is checked against
// its server's model list (llm's server unless it names another), under
// its own key.
func TestDoctorChecksEachModelsEntry(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.SetModels("gpt-x", "gpt-big")
	cfg := config.Defaults()
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.URL(), "gpt-x"
	cfg.Models = []config.ModelEntry{{Name: "big", Model: "gpt-big"}, {Name: "typo", Model: "gpt-bigg"}}
	checks := llmChecks(&cfg)
	if len(checks) != 3 || checks[1].name != "model big" || checks[2].name != "model typo" {
		t.Fatalf("checks = %+v", checks)
	}
	if detail, err := checks[1].run(context.Background()); err != nil || !strings.Contains(detail, "model gpt-big listed") {
		t.Errorf("listed entry: %q, %v", detail, err)
	}
	_, err := checks[2].run(context.Background())
	var warn doctorWarning
	if !errors.As(err, &warn) || !strings.Contains(err.Error(), `models[1].model "gpt-bigg" is not in its list`) {
		t.Errorf("unlisted entry: %v", err)
	}
}
