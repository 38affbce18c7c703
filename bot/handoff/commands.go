package handoff

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Commands returns the chat commands of the handoff feature, to register
// with the Router (bot.Router.Register): /handoff on s. A nil s answers
// that handoff is not available.
func Commands(s *Service) []bot.Command {
	return []bot.Command{{
		Name: "handoff",
		Help: "who answers here: /handoff AGENT hands this chat over, /handoff back returns it, /handoff shows the route",
		Run: func(ctx context.Context, _ bot.Host, in channels.Inbound, args string) string {
			return handoffCommand(ctx, s, in, args)
		},
	}}
}

// handoffCommand answers /handoff [AGENT|back].
func handoffCommand(ctx context.Context, s *Service, in channels.Inbound, args string) string {
	if s == nil {
		return "handoff is not available here."
	}
	addr := in.Address()
	arg := strings.TrimSpace(args)
	switch arg {
	case "":
		rt, err := s.Route(ctx, addr)
		if err != nil {
			return "Could not read the route right now (storage unavailable); try again later."
		}
		if rt == nil {
			return fmt.Sprintf("%s answers here (no handoff). /handoff AGENT hands this chat to another agent; /agents lists them.", s.AgentAt(ctx, addr))
		}
		text := fmt.Sprintf("%s answers here, handed off by %s", rt.Agent, rt.From)
		if rt.Reason != "" {
			text += ": " + rt.Reason
		}
		return text + ". /handoff back returns the chat to " + s.Directory.Bound(addr) + "."
	case "back":
		if _, err := s.Back(ctx, addr, in.Identity()); err != nil {
			return "Not handed back: " + err.Error() + "."
		}
		return "" // the chat was told
	}
	if _, err := s.To(ctx, addr, arg, "asked by "+in.Identity(), in.Identity()); err != nil {
		return "Not handed off: " + err.Error() + "."
	}
	return ""
}
