package agentcore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// schemaTool has a schema with many members no SDK field holds, which a
// map would write in a different order each time.
type schemaTool struct{ counter }

func (*schemaTool) Name() string { return "lookup" }
func (*schemaTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","title":"Lookup","description":"d","$schema":"https://json-schema.org/draft/2020-12/schema",` +
		`"properties":{"z":{"type":"string"},"a":{"type":"integer"},"m":{"type":"boolean"}},"required":["z"],` +
		`"additionalProperties":false,"$defs":{"x":{"type":"string"}},"examples":[{"z":"q"}]}`)
}

// prefixAgent is an agent with context files and tools, as the daemon
// builds one, on llm's OpenAI endpoint.
func prefixAgent(t *testing.T, llm *llmtest.Server) *agentcore.Agent {
	a := newAgent(t, llm, pgtest.Open(t, context.Background()), &counter{}, &schemaTool{})
	a.Context = func(context.Context, tools.Call) (string, error) {
		return "## AGENTS.md\nAnswer in English.", nil
	}
	return a
}

// run sends text as a new user message of session.
func run(t *testing.T, a *agentcore.Agent, session, text string) agentcore.RunResult {
	t.Helper()
	res, err := a.Run(context.Background(), agentcore.RunInput{Session: session, User: &agentcore.Message{Content: text}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// anthPrompt is the cached prefix's parts of a Messages API request, as
// sent.
type anthPrompt struct {
	System   json.RawMessage   `json:"system"`
	Tools    json.RawMessage   `json:"tools"`
	Messages []json.RawMessage `json:"messages"`
}

// withoutBreakpoints is raw without its cache_control members, which mark
// where the cache is read and written and are no part of what is cached.
func withoutBreakpoints(raw []byte) []byte {
	const cc = `"cache_control":{"type":"ephemeral"}`
	raw = bytes.ReplaceAll(raw, []byte(cc+","), nil)
	return bytes.ReplaceAll(raw, []byte(","+cc), nil)
}

// Each model call of a conversation, within a run (after a tool step) and
// from one run to the next, sends the system prompt and the tools byte for
// byte as the call before, and that call's messages as its own first ones:
// nothing per request stands in the prefix. The breakpoint that ended the
// earlier call stands on the same block in the next one.
func TestAnthropicPromptPrefixStaysTheSame(t *testing.T) {
	use := map[string]any{"type": "tool_use", "id": "toolu_1", "name": "count", "input": map[string]any{}}
	s := newAnthServer(t,
		anthReply{body: anthMessage("tool_use", use)},
		anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "counted"})},
		anthReply{body: anthMessage("tool_use", map[string]any{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": map[string]any{"z": "q"}})},
		anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "looked up"})},
	)
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	a := prefixAgent(t, llm)
	a.Provider = newAnthropicTest(s, agentcore.AnthropicOptions{})
	run(t, a, "a/prefix:1", "count once")
	run(t, a, "a/prefix:1", "now look it up")

	raws := s.rawRequests()
	if len(raws) != 4 {
		t.Fatalf("%d model calls, want 4", len(raws))
	}
	for i := 1; i < len(raws); i++ {
		t.Run(fmt.Sprint("call ", i+1), func(t *testing.T) {
			var prev, next anthPrompt
			if err := json.Unmarshal(raws[i-1], &prev); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raws[i], &next); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(prev.System, next.System) || len(next.System) == 0 {
				t.Fatalf("system changed:\n%s\n%s", prev.System, next.System)
			}
			if !bytes.Equal(prev.Tools, next.Tools) || len(next.Tools) == 0 {
				t.Fatalf("tools changed:\n%s\n%s", prev.Tools, next.Tools)
			}
			if len(next.Messages) <= len(prev.Messages) {
				t.Fatalf("%d messages after %d", len(next.Messages), len(prev.Messages))
			}
			for j, m := range prev.Messages {
				if p, n := withoutBreakpoints(m), withoutBreakpoints(next.Messages[j]); !bytes.Equal(p, n) {
					t.Fatalf("messages[%d] changed:\n%s\n%s", j, p, n)
				}
			}
			last := fmt.Sprintf("messages[%d].", len(prev.Messages)-1)
			prevMark := slices.IndexFunc(cachePaths(t, s.requests()[i-1]), func(p string) bool { return strings.HasPrefix(p, last) })
			nextPaths := cachePaths(t, s.requests()[i])
			if prevMark < 0 || !slices.Contains(nextPaths, cachePaths(t, s.requests()[i-1])[prevMark]) {
				t.Fatalf("breakpoints %v, want one where the previous call's last turn ended (%s…)", nextPaths, last)
			}
		})
	}
}

// The same on the OpenAI wire, which has no breakpoints: each call's
// messages and tools start byte for byte as the call before, so the fake's
// prompt cache serves them, and the run's usage shows it.
func TestOpenAIPromptPrefixStaysTheSame(t *testing.T) {
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	a := prefixAgent(t, llm)
	first := run(t, a, "a/prefix:2", "what time is it? CALL_TOOL:datetime")
	second := run(t, a, "a/prefix:2", "and now? CALL_TOOL:lookup {\"z\":\"q\"}")

	reqs := llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	type wire struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	for i := 1; i < len(reqs); i++ {
		var prev, next wire
		if err := json.Unmarshal(reqs[i-1].Body, &prev); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(reqs[i].Body, &next); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(prev.Tools, next.Tools) || len(next.Tools) == 0 {
			t.Fatalf("call %d: tools changed", i+1)
		}
		if len(next.Messages) <= len(prev.Messages) {
			t.Fatalf("call %d: %d messages after %d", i+1, len(next.Messages), len(prev.Messages))
		}
		for j, m := range prev.Messages {
			if !bytes.Equal(m, next.Messages[j]) {
				t.Fatalf("call %d: messages[%d] changed:\n%s\n%s", i+1, j, m, next.Messages[j])
			}
		}
		if reqs[i].CachedTokens == 0 {
			t.Fatalf("call %d: nothing cached", i+1)
		}
	}
	if first.Usage.CacheReadTokens == 0 || second.Usage.CacheReadTokens <= first.Usage.CacheReadTokens {
		t.Fatalf("usage: first run %+v, second %+v; want cache reads growing with the conversation", first.Usage, second.Usage)
	}
}

// A conversation longer than HistoryLimit lets its oldest messages go in
// steps: the calls between two steps start with the same messages, and
// their input is read from the cache, where a window sliding by each
// message would change its start every call.
func TestLongConversationKeepsItsStartBetweenSteps(t *testing.T) {
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	a := prefixAgent(t, llm)
	a.HistoryLimit = 16 // steps of 4 messages: every second turn
	for i := range 16 {
		run(t, a, "a/long:1", fmt.Sprint("turn ", i))
	}
	reqs := llm.Requests()
	kept := 0
	for i, r := range reqs {
		shown := len(r.Messages) - 1 // the system prompt
		if i < 8 {
			continue // the window is not full yet
		}
		if shown > 16 || shown < 16-4 {
			t.Fatalf("call %d shows %d messages, want 12 to 16", i+1, shown)
		}
		if r.Messages[1].Content == reqs[i-1].Messages[1].Content {
			kept++
			if r.CachedTokens == 0 {
				t.Fatalf("call %d starts as the one before and nothing was cached", i+1)
			}
		}
	}
	if kept < 4 {
		t.Fatalf("%d of the last 8 calls started as the one before, want every second", kept)
	}
}
