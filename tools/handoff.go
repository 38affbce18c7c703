package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// Handoffer hands a conversation to another agent (bot implements it).
type Handoffer interface {
	// Handoff routes the call's chat to agent to and says so.
	Handoff(ctx context.Context, from Call, to, reason string) (string, error)
	// HandBack returns the call's chat to its binding's agent.
	HandBack(ctx context.Context, from Call) (string, error)
}

// Handoff is the handoff tool.
type Handoff struct{ H Handoffer }

// Name implements Tool.
func (*Handoff) Name() string { return "handoff" }

// Description implements Tool.
func (*Handoff) Description() string {
	return `Hand this conversation to another agent better suited to it ({"agent": "name", "reason": "why"}); ` +
		`the chat's next messages go to that agent, which gets a note with your reason and the last messages. ` +
		`{"action": "back"} returns the conversation to the chat's usual agent. /agents lists the agents.`
}

// Parameters implements Tool.
func (*Handoff) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string"},"reason":{"type":"string"},` +
		`"action":{"type":"string","enum":["back"]}},"additionalProperties":false}`)
}

// SideEffect implements Tool: it changes who answers the chat.
func (*Handoff) SideEffect() SideEffect { return SideEffectNone }

// Execute implements Tool.
func (t *Handoff) Execute(ctx context.Context, raw json.RawMessage) Result {
	var a struct {
		Agent  string `json:"agent"`
		Reason string `json:"reason"`
		Action string `json:"action"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || (a.Action == "" && strings.TrimSpace(a.Agent) == "") || (a.Action != "" && a.Action != "back") {
		return ErrorResult(`pass {"agent": "name", "reason": "why"} or {"action": "back"}`)
	}
	call, _ := CallFrom(ctx)
	var (
		text string
		err  error
	)
	if a.Action == "back" {
		text, err = t.H.HandBack(ctx, call)
	} else {
		text, err = t.H.Handoff(ctx, call, strings.TrimSpace(a.Agent), a.Reason)
	}
	if err != nil {
		return ErrorResult("handoff refused: " + err.Error())
	}
	return Result{ForLLM: text + " Finish your reply to the user; the next message goes to the new agent."}
}
