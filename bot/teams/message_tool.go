package teams

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// MailMessage is one team mailbox message.
type MailMessage struct {
	ID, From, To, Text string
	// Origin is the conversation the sender worked for (a chat address):
	// the recipient's work on it happens in that conversation's team
	// session.
	Origin string
	At     time.Time
}

// Mailbox is the teams' mailbox (Redis Streams implement it): one stream
// per member; a message is read once even with several replicas reading,
// and one read but never confirmed (a crash) is delivered again.
type Mailbox interface {
	// Send puts m in m.To's inbox.
	Send(ctx context.Context, team string, m MailMessage) (string, error)
	// Read returns up to max unread messages of member and marks them
	// read. readKey names the read (the tool call): repeating a read with
	// the same key returns the same messages, not new ones.
	Read(ctx context.Context, team, member, readKey string, max int) ([]MailMessage, error)
}

// MessageToolOptions configures team_message.
type MessageToolOptions struct {
	Mailbox Mailbox
	// TeamOf returns an agent's team and lead; Members the team's agents
	// (lead included).
	TeamOf  func(agent string) (team, lead string, ok bool)
	Members func(team string) []string
	// Activate, when set, wakes a teammate that got mail.
	Activate func(ctx context.Context, team, agent string)
}

// MessageTool is the team_message tool.
type MessageTool struct{ o MessageToolOptions }

// NewMessageTool returns the team_message tool.
func NewMessageTool(o MessageToolOptions) *MessageTool { return &MessageTool{o} }

// maxMailRead bounds one read.
const maxMailRead = 50

// Name implements tools.Tool.
func (*MessageTool) Name() string { return "team_message" }

// Description implements tools.Tool.
func (*MessageTool) Description() string {
	return "Your team's mailbox. action: send {to, text} to one teammate, broadcast {text} to all, read (your unread messages)."
}

// Parameters implements tools.Tool.
func (*MessageTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["send","broadcast","read"]},` +
		`"to":{"type":"string"},"text":{"type":"string"}},"required":["action"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*MessageTool) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements tools.Tool.
func (t *MessageTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Action, To, Text string
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Action == "" {
		return tools.ErrorResult(`pass {"action": "send", "to": "agent", "text": "..."}, {"action": "broadcast", "text": "..."} or {"action": "read"}`)
	}
	call, _ := tools.CallFrom(ctx)
	team, _, ok := t.o.TeamOf(call.Agent)
	if !ok {
		return tools.ErrorResult("you are not in a team (teams: in the config); the mailbox belongs to a team")
	}
	members := t.o.Members(team)
	switch a.Action {
	case "read":
		msgs, err := t.o.Mailbox.Read(ctx, team, call.Agent, call.Session+"/"+call.ToolCallID, maxMailRead)
		if err != nil {
			return tools.ErrorResult("the mailbox is unavailable right now; try again later")
		}
		if len(msgs) == 0 {
			return tools.Result{ForLLM: "no unread team messages"}
		}
		var b strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&b, "[Team message from %s] %s\n", m.From, m.Text)
		}
		return tools.Result{ForLLM: b.String()}
	case "send", "broadcast":
		if strings.TrimSpace(a.Text) == "" {
			return tools.ErrorResult(`pass "text"`)
		}
		if len(a.Text) > tools.MaxMessageText {
			return tools.ErrorResult(fmt.Sprintf("text is %d bytes; at most %d", len(a.Text), tools.MaxMessageText))
		}
		var to []string
		if a.Action == "send" {
			if !slices.Contains(members, a.To) || a.To == call.Agent {
				return tools.ErrorResult(fmt.Sprintf("%q is not a teammate; your team is %s", a.To, strings.Join(members, ", ")))
			}
			to = []string{a.To}
		} else {
			for _, m := range members {
				if m != call.Agent {
					to = append(to, m)
				}
			}
		}
		for _, m := range to {
			mail := MailMessage{From: call.Agent, To: m, Text: a.Text, Origin: tools.OriginOf(call.Session)}
			if _, err := t.o.Mailbox.Send(ctx, team, mail); err != nil {
				return tools.ErrorResult("the mailbox is unavailable right now; try again later")
			}
			if t.o.Activate != nil {
				t.o.Activate(ctx, team, m)
			}
		}
		return tools.Result{ForLLM: "sent to " + strings.Join(to, ", ")}
	}
	return tools.ErrorResult("unknown action " + a.Action)
}
