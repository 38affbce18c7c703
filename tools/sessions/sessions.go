package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// SessionInfo describes one stored session.
type SessionInfo struct {
	Key, Scope string
	Messages   int
	Updated    time.Time
}

// SessionLine is one message of a session's history.
type SessionLine struct {
	Role, Content, ToolName string
	At                      time.Time
}

// SessionReader reads stored sessions (Postgres implements it).
type SessionReader interface {
	// ListSessions lists agent's sessions whose scope is scope or starts
	// with scope + ":" (its threads); scope "" lists all. Newest first.
	ListSessions(ctx context.Context, agent, scope string, limit int) ([]SessionInfo, error)
	// SessionLines returns the newest limit messages of session, in order.
	SessionLines(ctx context.Context, session string, limit int) ([]SessionLine, error)
}

// SessionWriter posts a message into a session (Postgres implements it);
// the session's agent answers it in the session's chat.
type SessionWriter interface {
	PostToSession(ctx context.Context, session, text string) error
}

// Options configures sessions_list, sessions_history and
// sessions_send.
type Options struct {
	Store SessionReader
	// Writer enables sessions_send; nil leaves it out.
	Writer SessionWriter
	// IsAdmin reports whether a person (platform:user_id) is an admin:
	// admins see every session of the agent, others only their chat's.
	IsAdmin func(identity string) bool
}

// NewTools returns sessions_list, sessions_history and, with a
// Writer, sessions_send.
func NewTools(o Options) []tools.Tool {
	out := []tools.Tool{&SessionsList{o}, &SessionsHistory{o}}
	if o.Writer != nil {
		out = append(out, &SessionsSend{o})
	}
	return out
}

// mayReach reports whether the call may look into or post to session: one
// of the caller's agent in its chat (or a thread of it), any of that
// agent's for an admin; posting also reaches other agents' sessions in the
// same chat.
func (o Options) mayReach(c tools.Call, session string, anyAgent bool) bool {
	agent, scope, ok := strings.Cut(session, "/")
	if !ok || agent == "" || scope == "" || (!anyAgent && agent != c.Agent) {
		return false
	}
	visible := o.visibleScope(c)
	return visible == "" || scope == visible || strings.HasPrefix(scope, visible+":")
}

// visibleScope is the scope a caller may list: the call's chat, or
// everything for an admin.
func (o Options) visibleScope(c tools.Call) string {
	if o.IsAdmin != nil && o.IsAdmin(c.UserID) {
		return ""
	}
	return c.Channel + ":" + c.ChatID
}

// SessionsList is the sessions_list tool.
type SessionsList struct{ o Options }

// Name implements Tool.
func (*SessionsList) Name() string { return "sessions_list" }

// Description implements Tool.
func (*SessionsList) Description() string {
	return "List your conversations (sessions) you may look at: this chat's (and its threads'), or all of yours when an admin asks."
}

// Parameters implements Tool.
func (*SessionsList) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*SessionsList) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements Tool.
func (t *SessionsList) Execute(ctx context.Context, _ json.RawMessage) tools.Result {
	call, _ := tools.CallFrom(ctx)
	if call.Agent == "" {
		return tools.ErrorResult("sessions work only inside a conversation")
	}
	list, err := t.o.Store.ListSessions(ctx, call.Agent, t.o.visibleScope(call), 50)
	if err != nil {
		return tools.ErrorResult("could not list sessions right now (storage unavailable); try again later")
	}
	if len(list) == 0 {
		return tools.Result{ForLLM: "no sessions"}
	}
	var b strings.Builder
	for _, s := range list {
		fmt.Fprintf(&b, "%s — %d messages, last %s\n", s.Key, s.Messages, s.Updated.UTC().Format(time.RFC3339))
	}
	return tools.Result{ForLLM: b.String()}
}

// SessionsHistory is the sessions_history tool.
type SessionsHistory struct{ o Options }

// Name implements Tool.
func (*SessionsHistory) Name() string { return "sessions_history" }

// Description implements Tool.
func (*SessionsHistory) Description() string {
	return "Show the recent messages of one of your sessions (a key from sessions_list)."
}

// Parameters implements Tool.
func (*SessionsHistory) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"session":{"type":"string"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["session"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*SessionsHistory) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements Tool.
func (t *SessionsHistory) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Session string `json:"session"`
		Limit   int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" {
		return tools.ErrorResult(`pass {"session": "agent/platform:chat", "limit"?: N}`)
	}
	if a.Limit <= 0 || a.Limit > 100 {
		a.Limit = 20
	}
	call, _ := tools.CallFrom(ctx)
	if !t.o.mayReach(call, a.Session, false) {
		return tools.ErrorResult("you may not read that session; sessions_list shows the ones you may")
	}
	lines, err := t.o.Store.SessionLines(ctx, a.Session, a.Limit)
	if err != nil {
		return tools.ErrorResult("could not read the session right now (storage unavailable); try again later")
	}
	if len(lines) == 0 {
		return tools.Result{ForLLM: "no messages in " + a.Session}
	}
	var b strings.Builder
	for _, l := range lines {
		who := l.Role
		if l.ToolName != "" {
			who += " " + l.ToolName
		}
		text := l.Content
		if len(text) > 500 {
			text = text[:500] + "…"
		}
		fmt.Fprintf(&b, "[%s] %s: %s\n", l.At.UTC().Format("2006-01-02 15:04"), who, strings.TrimSpace(text))
	}
	return tools.Result{ForLLM: b.String()}
}

// SessionsSend is the sessions_send tool: post into another session, whose
// agent answers in that session's chat.
type SessionsSend struct{ o Options }

// Name implements Tool.
func (*SessionsSend) Name() string { return "sessions_send" }

// Description implements Tool.
func (*SessionsSend) Description() string {
	return "Post a message into another session you may reach (a key from sessions_list, or another agent's session " +
		"in this chat); that session's agent answers it in its chat."
}

// Parameters implements Tool.
func (*SessionsSend) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"session":{"type":"string"},"text":{"type":"string"}},` +
		`"required":["session","text"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*SessionsSend) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// ApprovalKey implements ApprovalKeyed: "Always allow" covers one session.
func (*SessionsSend) ApprovalKey(args json.RawMessage) string {
	var a struct{ Session string }
	_ = json.Unmarshal(args, &a)
	return a.Session
}

// Execute implements Tool.
func (t *SessionsSend) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Session string `json:"session"`
		Text    string `json:"text"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" || strings.TrimSpace(a.Text) == "" {
		return tools.ErrorResult(`pass {"session": "agent/platform:chat", "text": "..."}`)
	}
	if len(a.Text) > tools.MaxMessageText {
		return tools.ErrorResult(fmt.Sprintf("text is %d bytes; at most %d", len(a.Text), tools.MaxMessageText))
	}
	call, _ := tools.CallFrom(ctx)
	if a.Session == call.Session {
		return tools.ErrorResult("that is this conversation; just answer here")
	}
	if !t.o.mayReach(call, a.Session, true) {
		return tools.ErrorResult("you may not post to that session; sessions_list shows the ones you may")
	}
	lines, err := t.o.Store.SessionLines(ctx, a.Session, 1)
	if err != nil {
		return tools.ErrorResult("could not reach the session right now (storage unavailable); try again later")
	}
	if len(lines) == 0 {
		return tools.ErrorResult("there is no session " + a.Session + "; sessions_list shows the ones there are")
	}
	text := fmt.Sprintf("[Message from %s in %s:%s] %s", call.Agent, call.Channel, call.ChatID, a.Text)
	if err := t.o.Writer.PostToSession(ctx, a.Session, text); err != nil {
		return tools.ErrorResult("could not post to the session right now (storage unavailable); try again later")
	}
	return tools.Result{ForLLM: "posted to " + a.Session + "; its agent answers there shortly"}
}
