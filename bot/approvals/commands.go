package approvals

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Commands are the approvals' chat commands, in the order /help lists
// them: /approvals and /cancel.
func Commands(s *Service) []bot.Command {
	return []bot.Command{
		{Name: "approvals", Help: "pending approvals (approvers only)", Run: func(ctx context.Context, _ bot.Host, in channels.Inbound, _ string) string {
			return s.list(ctx, in)
		}},
		{Name: "cancel", Help: "withdraw your request that waits for an approver", Run: func(ctx context.Context, _ bot.Host, in channels.Inbound, _ string) string {
			return s.cancelCommand(ctx, in)
		}},
	}
}

// list answers /approvals.
func (s *Service) list(ctx context.Context, in channels.Inbound) string {
	if !s.IsApprover(in.Identity()) {
		return "Only approvers can list approvals."
	}
	list, err := s.Pending(ctx)
	if err != nil {
		s.o.Logger.Error("list approvals", "err", err)
		return "Could not list approvals right now (storage unavailable)."
	}
	if len(list) == 0 {
		return "No approvals are waiting."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d waiting:\n", len(list))
	anyHidden := false
	for _, a := range list {
		cmd, hidden := bot.ShowInvisible(a.Command)
		anyHidden = anyHidden || hidden
		fmt.Fprintf(&b, "- %s by %s in %s, expires %s UTC: `%s`\n", a.Tool, a.Requester, a.Chat.String(),
			a.ExpiresAt.UTC().Format("15:04:05"), strings.ReplaceAll(cmd, "`", "'"))
		for _, w := range a.Warnings {
			b.WriteString("  ⚠️ Dangerous: " + w + "\n")
		}
		if v := votesSummary(a); v != "" {
			b.WriteString("  votes: " + v + "\n")
		}
	}
	if anyHidden {
		b.WriteString(bot.InvisibleWarning + "\n")
	}
	return b.String()
}

// cancelCommand withdraws the sender's pending approval requests in this
// chat's session (an approver may withdraw anyone's); the approvers'
// buttons are removed. The confirmation is queued first, then the parked
// runs resume and tell the model the user cancelled, so their answers
// come after it.
func (s *Service) cancelCommand(ctx context.Context, in channels.Inbound) string {
	text, done := s.cancel(ctx, in)
	if len(done) == 0 {
		return text
	}
	s.chat.Notify(ctx, in, text)
	for _, a := range done {
		s.Resume(ctx, a)
	}
	return ""
}

// cancel withdraws the requests and says what it did.
func (s *Service) cancel(ctx context.Context, in channels.Inbound) (string, []Approval) {
	session := s.chat.SessionKey(ctx, in.Address())
	done, err := s.Cancel(ctx, session, in.Identity())
	if err != nil {
		s.o.Logger.Error("cancel approvals", "session", session, "err", err)
		return "Could not withdraw the request right now (storage unavailable). Try /cancel again in a minute.", done
	}
	switch len(done) {
	case 0:
		return "Nothing of yours is waiting for an approver here.", nil
	case 1:
		return "Withdrawn: " + bot.CommandBlock(done[0].Command) + "\nI'll tell the agent it was cancelled.", done
	}
	return fmt.Sprintf("Withdrew %d requests. I'll tell the agent they were cancelled.", len(done)), done
}
