package llmtest

import (
	"reflect"
	"testing"
)

func TestEcho(t *testing.T) {
	user := func(s string) Message { return Message{Role: "user", Content: s} }
	tests := []struct {
		name string
		msgs []Message
		want Reply
	}{
		{"echo counts user messages", []Message{
			{Role: "system", Content: "sys"}, user("one"), {Role: "assistant", Content: "x"}, user("two"),
		}, Reply{Text: "echo: two (history: 2 user messages)"}},
		{"say", []Message{user("please SAY: the code is 1234 ")}, Reply{Text: "the code is 1234"}},
		{"call tool", []Message{user("now CALL_TOOL:datetime thanks")},
			Reply{ToolCalls: []ToolCall{{Name: "datetime", Arguments: "{}"}}}},
		{"empty tool name echoes", []Message{user("CALL_TOOL:")},
			Reply{Text: "echo: CALL_TOOL: (history: 1 user messages)"}},
		{"tool results", []Message{
			user("CALL_TOOL:a"),
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b"}}},
			{Role: "tool", ToolCallID: "c1", Content: "r1"},
			{Role: "tool", ToolCallID: "c2", Content: "r2"},
		}, Reply{Text: "tool a said: r1\ntool b said: r2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Echo(Request{Messages: tt.msgs}); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Echo = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSplitBytesKeepsRunes(t *testing.T) {
	s := `{"w":"größe ✓"}`
	var joined string
	for _, p := range splitBytes(s, 3) {
		joined += p
		for _, r := range p {
			if r == '\uFFFD' {
				t.Fatalf("piece %q splits a rune", p)
			}
		}
	}
	if joined != s {
		t.Fatalf("joined = %q, want %q", joined, s)
	}
}

func TestEchoCallToolWithArguments(t *testing.T) {
	r := Echo(Request{Messages: []Message{{Role: "user", Content: `please CALL_TOOL:exec {"command":"echo hi"}`}}})
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "exec" || r.ToolCalls[0].Arguments != `{"command":"echo hi"}` {
		t.Fatalf("reply = %+v", r)
	}
	r = Echo(Request{Messages: []Message{{Role: "user", Content: "CALL_TOOL:datetime now {x}"}}})
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != "{}" {
		t.Fatalf("text after other words is not arguments: %+v", r)
	}
}
