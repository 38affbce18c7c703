package handoff

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// handoffNoteMessages is how many recent messages the note quotes.
const handoffNoteMessages = 6

// Service hands conversations between agents: the handoff tool and
// /handoff use it, and the Router asks it who answers in a chat
// (bot.Options.Route). The route lives in Redis with a durable copy in
// Postgres (Routes); the receiving agent gets a note with who, why and
// the last messages; the chat is told.
type Service struct {
	Routes    *Routes
	Directory bot.Directory
	History   agentcore.History
	Outbox    bot.Outbox
	Nudge     func()
	Logger    *slog.Logger
}

var (
	_ tools.Handoffer = (*Service)(nil)
	_ bot.AgentRoute  = (*Service)(nil)
)

// AgentAt returns the agent answering at addr: its live route's, else its
// binding's. A route storage failure falls back to the binding (logged).
func (s *Service) AgentAt(ctx context.Context, addr channels.Address) string {
	bound := s.Directory.Bound(addr)
	if s.Routes == nil || len(s.Directory.Names) < 2 {
		return bound // with one agent there is nowhere to hand off to: no lookup
	}
	r, err := s.Routes.Current(ctx, addr.String())
	if err != nil {
		s.logger().Warn("handoff routes unavailable; using the binding", "address", addr.String(), "err", err)
		return bound
	}
	if r != nil && slices.Contains(s.Directory.Names, r.Agent) {
		return r.Agent
	}
	return bound
}

// Route returns addr's live route, or nil.
func (s *Service) Route(ctx context.Context, addr channels.Address) (*Route, error) {
	return s.Routes.Current(ctx, addr.String())
}

// Describe implements bot.AgentRoute: the line /status shows about a live
// route of addr, or "" without one (or when storage cannot say).
func (s *Service) Describe(ctx context.Context, addr channels.Address) string {
	rt, err := s.Route(ctx, addr)
	if err != nil || rt == nil {
		return ""
	}
	return fmt.Sprintf("Handed off to %s by %s at %s UTC (until %s UTC); /handoff back returns it",
		rt.Agent, rt.From, rt.SetAt.UTC().Format("15:04"), rt.Expires.UTC().Format("2006-01-02 15:04"))
}

// To hands the conversation at addr to agent to; by is who asked.
func (s *Service) To(ctx context.Context, addr channels.Address, to, reason, by string) (string, error) {
	from := s.AgentAt(ctx, addr)
	switch {
	case !slices.Contains(s.Directory.Names, to):
		return "", fmt.Errorf("there is no agent %q; agents are %s", to, strings.Join(s.Directory.Names, ", "))
	case to == from:
		return "", fmt.Errorf("%s is already answering here", to)
	}
	reason = strings.TrimSpace(reason)
	if to == s.Directory.Bound(addr) {
		// Handing to the binding's agent is handing back.
		if err := s.Routes.Clear(ctx, addr.String()); err != nil {
			return "", err
		}
	} else if _, err := s.Routes.Set(ctx, addr.String(), to, from, reason, by); err != nil {
		return "", err
	}
	s.note(ctx, addr, from, to, reason)
	text := fmt.Sprintf("Now talking to %s (handed off by %s", to, from)
	if reason != "" {
		text += ": " + reason
	}
	text += ")."
	s.tell(ctx, addr, text)
	return text, nil
}

// Back returns the conversation at addr to its binding's agent.
func (s *Service) Back(ctx context.Context, addr channels.Address, by string) (string, error) {
	r, err := s.Routes.Current(ctx, addr.String())
	if err != nil {
		return "", err
	}
	bound := s.Directory.Bound(addr)
	if r == nil {
		return "", fmt.Errorf("%s is answering here already; there is nothing to hand back", bound)
	}
	if err := s.Routes.Clear(ctx, addr.String()); err != nil {
		return "", err
	}
	s.note(ctx, addr, r.Agent, bound, "handed back by "+by)
	text := fmt.Sprintf("Back to %s (handed back from %s).", bound, r.Agent)
	s.tell(ctx, addr, text)
	return text, nil
}

// Handoff implements tools.Handoffer for the handoff tool.
func (s *Service) Handoff(ctx context.Context, from tools.Call, to, reason string) (string, error) {
	addr := channels.Address{Platform: from.Channel, ChatID: from.ChatID, ThreadID: from.ThreadID}
	if cur := s.AgentAt(ctx, addr); cur != from.Agent {
		return "", fmt.Errorf("this conversation is with %s now, not you", cur)
	}
	return s.To(ctx, addr, to, reason, "agent:"+from.Agent)
}

// HandBack implements tools.Handoffer.
func (s *Service) HandBack(ctx context.Context, from tools.Call) (string, error) {
	addr := channels.Address{Platform: from.Channel, ChatID: from.ChatID, ThreadID: from.ThreadID}
	return s.Back(ctx, addr, "agent:"+from.Agent)
}

// note gives the receiving agent a note in its session: who handed over,
// why, and the last messages of the conversation so far.
func (s *Service) note(ctx context.Context, addr channels.Address, from, to, reason string) {
	scope := addr.String()
	msgs, err := s.History.Load(ctx, agentcore.SessionKey{Agent: from, Scope: scope}.String(), 30)
	if err != nil {
		s.logger().Warn("handoff note without history", "err", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[Handoff] %s handed this conversation to you (%s)", from, to)
	if reason != "" {
		b.WriteString(": " + reason)
	}
	var recent []string
	for i := len(msgs) - 1; i >= 0 && len(recent) < handoffNoteMessages; i-- {
		m := msgs[i]
		// Notes and notices are not the conversation: earlier handoffs'
		// notes, failed runs' apologies.
		if (m.Role != agentcore.RoleUser && m.Role != agentcore.RoleAssistant) || m.IsNote() || m.IsNotice() || strings.TrimSpace(m.Content) == "" {
			continue
		}
		text := strings.Join(strings.Fields(m.Content), " ")
		if len(text) > 300 {
			text = text[:300] + "…"
		}
		recent = append(recent, fmt.Sprintf("%s: %s", m.Role, text))
	}
	if len(recent) > 0 {
		b.WriteString("\nThe last messages before the handoff:")
		for i := len(recent) - 1; i >= 0; i-- {
			b.WriteString("\n- " + recent[i])
		}
	}
	target := agentcore.SessionKey{Agent: to, Scope: scope}.String()
	// A note, not a turn: the receiving agent's model is shown it as
	// context, and recovery never sends it to the chat.
	note := agentcore.Note(fmt.Sprintf("handoff:%d", time.Now().UnixNano()), b.String())
	if _, err := s.History.Append(ctx, target, note); err != nil {
		s.logger().Warn("could not give the receiving agent its handoff note", "agent", to, "err", err)
	}
}

func (s *Service) tell(ctx context.Context, addr channels.Address, text string) {
	if _, err := s.Outbox.Enqueue(ctx, bot.OutboxMessage{To: addr, Text: text}); err != nil {
		s.logger().Warn("could not tell the chat about the handoff", "err", err)
		return
	}
	if s.Nudge != nil {
		s.Nudge()
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}
