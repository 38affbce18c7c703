package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
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

// SessionsOptions configures sessions_list and sessions_history.
type SessionsOptions struct {
	Store SessionReader
	// IsAdmin reports whether a person (platform:user_id) is an admin:
	// admins see every session of the agent, others only their chat's.
	IsAdmin func(identity string) bool
}

// NewSessionsTools returns sessions_list and sessions_history.
func NewSessionsTools(o SessionsOptions) []Tool {
	return []Tool{&SessionsList{o}, &SessionsHistory{o}}
}

// visibleScope is the scope a caller may list: the call's chat, or
// everything for an admin.
func (o SessionsOptions) visibleScope(c Call) string {
	if o.IsAdmin != nil && o.IsAdmin(c.UserID) {
		return ""
	}
	return c.Channel + ":" + c.ChatID
}

// SessionsList is the sessions_list tool.
type SessionsList struct{ o SessionsOptions }

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
func (*SessionsList) SideEffect() SideEffect { return SideEffectNone }

// Execute implements Tool.
func (t *SessionsList) Execute(ctx context.Context, _ json.RawMessage) Result {
	call, _ := CallFrom(ctx)
	if call.Agent == "" {
		return ErrorResult("sessions work only inside a conversation")
	}
	list, err := t.o.Store.ListSessions(ctx, call.Agent, t.o.visibleScope(call), 50)
	if err != nil {
		return ErrorResult("could not list sessions right now (storage unavailable); try again later")
	}
	if len(list) == 0 {
		return Result{ForLLM: "no sessions"}
	}
	var b strings.Builder
	for _, s := range list {
		fmt.Fprintf(&b, "%s — %d messages, last %s\n", s.Key, s.Messages, s.Updated.UTC().Format(time.RFC3339))
	}
	return Result{ForLLM: b.String()}
}

// SessionsHistory is the sessions_history tool.
type SessionsHistory struct{ o SessionsOptions }

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
func (*SessionsHistory) SideEffect() SideEffect { return SideEffectNone }

// Execute implements Tool.
func (t *SessionsHistory) Execute(ctx context.Context, raw json.RawMessage) Result {
	var a struct {
		Session string `json:"session"`
		Limit   int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" {
		return ErrorResult(`pass {"session": "agent/platform:chat", "limit"?: N}`)
	}
	if a.Limit <= 0 || a.Limit > 100 {
		a.Limit = 20
	}
	call, _ := CallFrom(ctx)
	agent, scope, ok := strings.Cut(a.Session, "/")
	visible := t.o.visibleScope(call)
	if !ok || agent != call.Agent || (visible != "" && scope != visible && !strings.HasPrefix(scope, visible+":")) {
		return ErrorResult("you may not read that session; sessions_list shows the ones you may")
	}
	lines, err := t.o.Store.SessionLines(ctx, a.Session, a.Limit)
	if err != nil {
		return ErrorResult("could not read the session right now (storage unavailable); try again later")
	}
	if len(lines) == 0 {
		return Result{ForLLM: "no messages in " + a.Session}
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
	return Result{ForLLM: b.String()}
}
