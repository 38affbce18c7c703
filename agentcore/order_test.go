package agentcore

import (
	"strings"
	"testing"
)

// Tool results move right after the call that asked for them, messages
// written meanwhile after the results; a window without tool calls is
// returned as it is, without a copy.
func TestOrderToolResults(t *testing.T) {
	call := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a"}, {ID: "b"}}}
	in := []Message{
		{Role: RoleUser, Content: "run it"},
		call,
		{Role: RoleTool, ToolCallID: "a", Content: "ra"},
		{Role: RoleUser, Content: "meanwhile"},
		{Role: RoleTool, ToolCallID: "b", Content: "rb"},
		{Role: RoleAssistant, Content: "done"},
	}
	got := orderToolResults(in)
	var order []string
	for _, m := range got {
		order = append(order, string(m.Role)+":"+m.Content+m.ToolCallID)
	}
	want := []string{"user:run it", "assistant:", "tool:raa", "tool:rbb", "user:meanwhile", "assistant:done"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("order = %v, want %v", order, want)
	}

	plain := []Message{{Role: RoleUser, Content: "hi"}, {Role: RoleAssistant, Content: "hello"}}
	if got := orderToolResults(plain); len(got) != 2 || &got[0] != &plain[0] {
		t.Fatalf("a window without tool calls was changed or copied: %+v", got)
	}
	if n := testing.AllocsPerRun(10, func() { orderToolResults(plain) }); n != 0 {
		t.Errorf("%v allocations for a window without tool calls, want 0", n)
	}
}
