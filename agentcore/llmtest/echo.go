package llmtest

import (
	"fmt"
	"strings"
)

// Markers in the last user message that steer Echo.
const (
	// CallToolMarker followed by a tool name ("CALL_TOOL:datetime") makes
	// Echo call that tool with {} arguments, or with the JSON object that
	// follows the name ("CALL_TOOL:exec {"command":"ls"}").
	CallToolMarker = "CALL_TOOL:"
	// SayMarker makes Echo reply with exactly the rest of the message after
	// it, surrounding spaces trimmed ("SAY: hello" → "hello").
	SayMarker = "SAY:"
)

// Echo is the default responder, deterministic for end-to-end tests:
//
//   - after tool results (the request ends with tool messages) it replies
//     "tool <name> said: <content>", one line per result;
//   - if the last user message contains CALL_TOOL:<name>, it calls that tool
//     with {} arguments;
//   - if it contains SAY:<text>, it replies <text>;
//   - otherwise it replies "echo: <last user message> (history: N user
//     messages)", N counting the user messages of the request.
func Echo(req Request) Reply {
	if results := trailingToolResults(req.Messages); len(results) > 0 {
		return Reply{Text: strings.Join(results, "\n")}
	}
	last, users := "", 0
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
			users++
		}
	}
	if _, rest, ok := strings.Cut(last, CallToolMarker); ok {
		if f := strings.Fields(rest); len(f) > 0 {
			args := "{}"
			if i := strings.Index(rest, "{"); i >= 0 && strings.TrimSpace(rest[:i]) == f[0] {
				args = rest[i:]
			}
			return Reply{ToolCalls: []ToolCall{{Name: f[0], Arguments: args}}}
		}
	}
	if _, rest, ok := strings.Cut(last, SayMarker); ok {
		return Reply{Text: strings.TrimSpace(rest)}
	}
	return Reply{Text: fmt.Sprintf("echo: %s (history: %d user messages)", last, users)}
}

// trailingToolResults renders the tool messages that end msgs, naming each
// tool by the assistant call it answers.
func trailingToolResults(msgs []Message) []string {
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == "tool" {
		start--
	}
	if start == len(msgs) {
		return nil
	}
	names := map[string]string{}
	for _, m := range msgs[:start] {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	var out []string
	for _, m := range msgs[start:] {
		name := names[m.ToolCallID]
		if name == "" {
			name = m.ToolCallID
		}
		out = append(out, fmt.Sprintf("tool %s said: %s", name, m.Content))
	}
	return out
}
