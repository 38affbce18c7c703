package llmtest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// A request that starts with the messages of an earlier answered one, byte
// for byte, reports their tokens as cached, in prompt_tokens; a changed
// system prompt, other tools, another model or a failed earlier request
// caches nothing.
func TestPromptCacheCountsTheRepeatedLeadingMessages(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	ctx := context.Background()
	first := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief please"), openai.UserMessage("one two")}
	second := append(append([]openai.ChatCompletionMessageParamUnion(nil), first...),
		openai.AssistantMessage("echo: one two"), openai.UserMessage("three"))
	weather := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "weather"})}

	usage := func(model string, msgs []openai.ChatCompletionMessageParamUnion, tools []openai.ChatCompletionToolUnionParam) openai.CompletionUsage {
		t.Helper()
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model, Messages: msgs, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Requests()[len(s.Requests())-1].CachedTokens; int64(got) != res.Usage.PromptTokensDetails.CachedTokens {
			t.Fatalf("recorded CachedTokens %d, reported %d", got, res.Usage.PromptTokensDetails.CachedTokens)
		}
		return res.Usage
	}
	if u := usage("m", first, nil); u.PromptTokens != 7 || u.PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("first request: %+v, want 7 prompt tokens, none cached", u)
	}
	// The system message (3 words + 1) and the first user message (2 + 1)
	// went out before: 7 of 7+4+2.
	if u := usage("m", second, nil); u.PromptTokens != 13 || u.PromptTokensDetails.CachedTokens != 7 {
		t.Fatalf("second request: %+v, want 7 of 13 cached", u)
	}
	if u := usage("m", second, nil); u.PromptTokensDetails.CachedTokens != 13 {
		t.Fatalf("the same request again: %+v, want all 13 cached", u)
	}
	changed := append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief now")}, second[1:]...)
	if u := usage("m", changed, nil); u.PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("changed system prompt: %+v, want nothing cached", u)
	}
	if u := usage("m", second, weather); u.PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("other tools: %+v, want nothing cached", u)
	}
	if u := usage("other", second, nil); u.PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("other model: %+v, want nothing cached", u)
	}

	s.Enqueue(llmtest.Reply{Status: http.StatusInternalServerError})
	fresh := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("never answered")}
	if _, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: fresh}); err == nil {
		t.Fatal("the scripted failure did not fail")
	}
	if u := usage("m", fresh, nil); u.PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("after a failed request: %+v, want nothing cached", u)
	}
}

// The streamed usage chunk carries the cached tokens too.
func TestPromptCacheInStreamedUsage(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a b c")}
	var cached []int64
	for range 2 {
		chunks, err := collect(t, c, openai.ChatCompletionNewParams{Model: "m", Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		last := chunks[len(chunks)-1]
		if last.Usage.PromptTokens != 4 {
			t.Fatalf("usage chunk = %+v, want 4 prompt tokens", last.Usage)
		}
		cached = append(cached, last.Usage.PromptTokensDetails.CachedTokens)
	}
	if cached[0] != 0 || cached[1] != 4 {
		t.Fatalf("cached tokens = %v, want [0 4]", cached)
	}
}
