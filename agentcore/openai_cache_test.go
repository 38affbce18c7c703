package agentcore_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// prompt_tokens include the cached_tokens of prompt_tokens_details:
// InputTokens are the rest, never fewer than none, and a count below zero
// is 0.
func TestOpenAIUsageWithCachedTokens(t *testing.T) {
	tests := []struct {
		name                   string
		prompt, cached, output int
		want                   agentcore.Usage
	}{
		{"part cached", 100, 60, 7, agentcore.Usage{InputTokens: 40, CacheReadTokens: 60, OutputTokens: 7}},
		{"none cached", 100, 0, 7, agentcore.Usage{InputTokens: 100, OutputTokens: 7}},
		{"more cached than the prompt", 100, 150, 7, agentcore.Usage{CacheReadTokens: 100, OutputTokens: 7}},
		{"negative cached", 100, -5, 7, agentcore.Usage{InputTokens: 100, OutputTokens: 7}},
		{"negative prompt", -100, 50, 7, agentcore.Usage{OutputTokens: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}` + "\n\n" +
				fmt.Sprintf(`data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":1,`+
					`"prompt_tokens_details":{"cached_tokens":%d}}}`, tc.prompt, tc.output, tc.cached) + "\n\n" +
				"data: [DONE]\n\n"
			p := agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: streamServer(t, http.StatusOK, body), Model: "m"})
			resp, err := p.Chat(context.Background(), userReq("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != tc.want {
				t.Fatalf("usage = %+v, want %+v", resp.Usage, tc.want)
			}
		})
	}
}

// Against llmtest, the second call of a conversation reads its first
// call's messages from the cache.
func TestOpenAICachedTokensFromTheFake(t *testing.T) {
	s, p := newOpenAITest(t)
	req := userReq("hello there")
	req.System = "you are a test"
	first, err := p.Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages,
		agentcore.Message{Role: agentcore.RoleAssistant, Content: first.Content},
		agentcore.Message{Role: agentcore.RoleUser, Content: "again"})
	second, err := p.Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.CacheReadTokens != 0 {
		t.Fatalf("first call: %+v, want nothing cached", first.Usage)
	}
	// The system prompt and the first user message: all of the first
	// call's input.
	if got := s.Requests()[1].CachedTokens; got == 0 || second.Usage.CacheReadTokens != got || second.Usage.CacheReadTokens != first.Usage.InputTokens {
		t.Fatalf("second call: %+v (server cached %d), want the first call's %d input tokens read from the cache",
			second.Usage, got, first.Usage.InputTokens)
	}
}

// A traced model call counts cached input within gen_ai.usage.input_tokens,
// as the GenAI conventions do, and names the cache reads apart.
func TestTracedCallCountsCachedInput(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	a := prefixAgent(t, llm)
	a.Tracer = tp.Tracer("test")
	run(t, a, "a/traced:1", "hello")
	second := run(t, a, "a/traced:1", "again")

	var last map[attribute.Key]attribute.Value
	for _, s := range exp.GetSpans() {
		if s.Name == "llm.chat" {
			last = map[attribute.Key]attribute.Value{}
			for _, kv := range s.Attributes {
				last[kv.Key] = kv.Value
			}
		}
	}
	u := second.Usage
	if u.CacheReadTokens == 0 {
		t.Fatalf("second run's usage %+v: nothing cached", u)
	}
	if got := last["gen_ai.usage.input_tokens"].AsInt64(); got != int64(u.InputTokens+u.CacheReadTokens) {
		t.Errorf("input_tokens = %d, want %d uncached + %d cached", got, u.InputTokens, u.CacheReadTokens)
	}
	if got := last["gen_ai.usage.cache_read.input_tokens"].AsInt64(); got != int64(u.CacheReadTokens) {
		t.Errorf("cache_read.input_tokens = %d, want %d", got, u.CacheReadTokens)
	}
}
