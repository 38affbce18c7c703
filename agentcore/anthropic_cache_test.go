package agentcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools"
)

// cachePaths lists where a request body carries cache_control, as paths
// like "system[0]" or "messages[2].content[1]", sorted; each must be
// {"type":"ephemeral"}.
func cachePaths(t *testing.T, body any) []string {
	t.Helper()
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k == "cache_control" {
					if !reflect.DeepEqual(e, ephemeral) {
						t.Errorf("%s: cache_control %v, want %v", path, e, ephemeral)
					}
					out = append(out, path)
					continue
				}
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", body)
	sort.Strings(out)
	return out
}

// The breakpoints go on the last tool, the last system block, the turn
// that ended the previous call and the newest turn: never more than the
// API's four, and only where there is such a part.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	toolSpecs := []tools.Spec{{Name: "a_tool", Description: "first"}, {Name: "b_tool", Description: "second"}}
	user := func(text string) agentcore.Message { return agentcore.Message{Role: agentcore.RoleUser, Content: text} }
	said := func(text string) agentcore.Message {
		return agentcore.Message{Role: agentcore.RoleAssistant, Content: text}
	}
	call := agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{
		{ID: "t1", Name: "a_tool", Arguments: json.RawMessage(`{}`)}, {ID: "t2", Name: "b_tool", Arguments: json.RawMessage(`{}`)},
	}}
	results := []agentcore.Message{
		{Role: agentcore.RoleTool, ToolCallID: "t1", Content: "one"},
		{Role: agentcore.RoleTool, ToolCallID: "t2", Content: "two"},
	}
	tests := []struct {
		name string
		req  agentcore.Request
		want []string
	}{{
		name: "one message, nothing else",
		req:  agentcore.Request{Messages: []agentcore.Message{user("hi")}},
		want: []string{"messages[0].content[0]"},
	}, {
		name: "first call with system and tools",
		req:  agentcore.Request{System: "be kind", Tools: toolSpecs, Messages: []agentcore.Message{user("hi")}},
		want: []string{"messages[0].content[0]", "system[0]", "tools[1]"},
	}, {
		name: "two system blocks: the last",
		req: agentcore.Request{System: "be kind", Messages: []agentcore.Message{
			{Role: agentcore.RoleSystem, Content: "also brief"}, user("hi"),
		}},
		want: []string{"messages[0].content[0]", "system[1]"},
	}, {
		name: "second turn",
		req:  agentcore.Request{System: "s", Messages: []agentcore.Message{user("hi"), said("hello"), user("more")}},
		want: []string{"messages[0].content[0]", "messages[2].content[0]", "system[0]"},
	}, {
		name: "tool step: the results' turn is the newest",
		req: agentcore.Request{System: "s", Tools: toolSpecs, Messages: append([]agentcore.Message{
			user("hi"), said("hello"), user("check both"), call,
		}, results...)},
		want: []string{"messages[2].content[0]", "messages[4].content[1]", "system[0]", "tools[1]"},
	}, {
		name: "long conversation: four at most",
		req: agentcore.Request{System: "s", Tools: toolSpecs, Messages: append(append([]agentcore.Message{
			user("1"), said("2"), user("3"), said("4"), user("check both"), call,
		}, results...), said("both fine"), user("thanks"), user("and bye"))},
		want: []string{"messages[6].content[1]", "messages[8].content[1]", "system[0]", "tools[1]"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newAnthServer(t, anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "ok"})})
			if _, err := newAnthropicTest(s, agentcore.AnthropicOptions{}).Chat(context.Background(), tc.req, nil); err != nil {
				t.Fatal(err)
			}
			got := cachePaths(t, s.requests()[0])
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("cache_control at %v, want %v", got, tc.want)
			}
		})
	}
}

// The usage of a streamed reply counts uncached input, cache reads and
// cache writes apart, from message_start and from the cumulative counts a
// message_delta may bring; a negative count is 0.
func TestAnthropicUsageWithCache(t *testing.T) {
	text := map[string]any{"type": "text", "text": "ok"}
	withUsage := func(u map[string]any) map[string]any {
		msg := anthMessage("end_turn", text)
		msg["usage"] = u
		return msg
	}
	deltaUsage := anthStream(withUsage(map[string]any{"input_tokens": 3, "output_tokens": 4}))
	for _, ev := range deltaUsage {
		if ev["type"] == "message_delta" {
			ev["usage"] = map[string]any{"output_tokens": 9, "input_tokens": 5, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 80}
		}
	}
	tests := []struct {
		name  string
		reply anthReply
		want  agentcore.Usage
	}{{
		name: "counts at the start",
		reply: anthReply{body: withUsage(map[string]any{
			"input_tokens": 12, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 300, "output_tokens": 40,
		})},
		want: agentcore.Usage{InputTokens: 12, CacheReadTokens: 2000, CacheWriteTokens: 300, OutputTokens: 40},
	}, {
		name:  "final counts in message_delta",
		reply: anthReply{events: deltaUsage},
		want:  agentcore.Usage{InputTokens: 5, CacheReadTokens: 700, CacheWriteTokens: 80, OutputTokens: 9},
	}, {
		name: "negative counts",
		reply: anthReply{body: withUsage(map[string]any{
			"input_tokens": -12, "cache_read_input_tokens": -1, "cache_creation_input_tokens": 30, "output_tokens": -40,
		})},
		want: agentcore.Usage{CacheWriteTokens: 30},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newAnthServer(t, tc.reply)
			resp, err := newAnthropicTest(s, agentcore.AnthropicOptions{}).Chat(context.Background(), userReq("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != tc.want {
				t.Fatalf("usage = %+v, want %+v", resp.Usage, tc.want)
			}
		})
	}
}
