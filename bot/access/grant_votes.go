package access

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/channels"
)

// votersOf are the identities that may vote on req: its rule's approvers,
// or the admins when no rule matched it.
func (s *Service) votersOf(req GrantRequest) []string {
	if len(req.Approvers) > 0 {
		return req.Approvers
	}
	return s.o.Admins
}

// ballotOf is who may vote on req; the requester is the person the grant
// is for (nobody for an agent's grant, asked by a scheduled job).
func (s *Service) ballotOf(req GrantRequest) quorum.Ballot {
	b := quorum.Ballot{Voters: s.votersOf(req), SelfApprove: req.SelfApprove}
	if req.SubjectKind == GrantUser {
		b.Requester = req.Subject
	}
	return b
}

// DecideGrantPress handles a press on a grant-request button: only the
// request's approvers vote, each person once, the subject's own vote only
// when the rule lets it count; every press is answered.
func (s *Service) DecideGrantPress(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	status, ok := map[string]string{choiceApprove: StatusApproved, choiceReject: StatusDenied}[choice]
	if !ok || s.o.Grants == nil {
		s.chat.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	req, outcome, err := s.voteGrant(ctx, id, status, presser)
	switch {
	case errors.Is(err, quorum.ErrNotApprover):
		s.o.Logger.Warn("grant press by a non-approver", "request_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "You may not decide this.")
	case errors.Is(err, quorum.ErrOwnRequest):
		s.o.Logger.Warn("grant press by its requester", "request_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "You asked for this; another approver must decide.")
	case errors.Is(err, bot.ErrNotFound):
		s.chat.AnswerPress(ctx, in, "This request no longer exists.")
	case err != nil:
		s.chat.AnswerPress(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	case outcome == quorum.Counted:
		s.chat.AnswerPress(ctx, in, fmt.Sprintf("Your vote is counted: %d of %d.", quorum.Allows(req.Votes), req.Quorum))
	case outcome == quorum.Repeated:
		s.chat.AnswerPress(ctx, in, "You voted already; another approver must decide.")
	case outcome != quorum.Decided:
		s.chat.AnswerPress(ctx, in, fmt.Sprintf("Already decided: %s by %s.", req.Status, req.DecidedBy))
	case req.Status == StatusDenied:
		s.chat.AnswerPress(ctx, in, "Denied.")
	default:
		s.chat.AnswerPress(ctx, in, "Approved.")
	}
}

// voteGrant records by's pressed vote on grant request id and follows up
// on what it did: a decision edits the messages and tells the asking
// chat, a counted vote shows on every message.
func (s *Service) voteGrant(ctx context.Context, id, status, by string) (GrantRequest, quorum.Outcome, error) {
	cur, err := s.o.Grants.GetGrantRequest(ctx, id)
	if err != nil {
		if !errors.Is(err, bot.ErrNotFound) {
			s.o.Logger.Error("load grant request", "request_id", id, "err", err)
		}
		return GrantRequest{}, 0, err
	}
	if err := s.o.People.Admit(s.ballotOf(cur), by, true); err != nil {
		return cur, 0, err
	}
	req, outcome, err := s.o.Grants.VoteGrantRequest(ctx, id, quorum.Vote{Person: s.o.People.PersonOf(by), Identity: by, Choice: status})
	if err != nil {
		if !errors.Is(err, bot.ErrNotFound) {
			s.o.Logger.Error("vote on grant request", "request_id", id, "err", err)
		}
		return req, 0, err
	}
	switch outcome {
	case quorum.Decided:
		s.grantDecided(ctx, req)
	case quorum.Counted:
		s.o.Logger.Info("grant vote counted", "request_id", id, "by", by, "votes", quorum.Allows(req.Votes), "quorum", req.Quorum)
		s.showGrantVotes(ctx, req)
	}
	return req, outcome, nil
}

// showGrantVotes edits every message about pending request req to show
// its votes so far, keeping the buttons.
func (s *Service) showGrantVotes(ctx context.Context, req GrantRequest) {
	if s.o.Messages == nil {
		return
	}
	s.chat.ShowProgress(ctx, s.o.Messages, KindGrantRequest, req.ID, func(bot.DecisionMessage) (string, [][]channels.Button) {
		// A message not delivered yet is edited once it is, maybe after the
		// decision's own edit: it must not bring the buttons back then.
		if cur, err := s.o.Grants.GetGrantRequest(context.WithoutCancel(ctx), req.ID); err == nil && cur.Status != StatusPending {
			return grantOutcomeText(cur), nil
		}
		return grantRequestText(req), decisionButtons(GrantButton, req.ID)
	})
}

// grantDecided edits the approvers' messages and tells the asking chat once.
func (s *Service) grantDecided(ctx context.Context, req GrantRequest) {
	s.o.Logger.Info("grant request decided", "request_id", req.ID, "server", req.Server, "tool", req.Tool, "status", req.Status, "by", req.DecidedBy)
	who := "An admin"
	if req.Quorum > 1 {
		who = fmt.Sprintf("%d approvers", req.Quorum)
	}
	tell := fmt.Sprintf("✅ %s granted %s of mcp:%s to %s; ask again and it will work.", who, req.Tool, req.Server, req.Subject)
	if req.Status == StatusDenied {
		tell = fmt.Sprintf("❌ An admin declined %s of mcp:%s for %s.", req.Tool, req.Server, req.Subject)
	}
	if s.o.Messages != nil {
		s.chat.EditDecisions(ctx, s.o.Messages, KindGrantRequest, req.ID, func(bot.DecisionMessage) string { return grantOutcomeText(req) })
	}
	if req.Chat.Platform != "" {
		s.chat.Send(ctx, bot.OutboxMessage{To: req.Chat, Text: tell})
	}
}

// grantRequestText is the card the approvers are asked with, with the
// votes so far.
func grantRequestText(req GrantRequest) string {
	text := fmt.Sprintf("🔑 *Tool access request*\n%s wants `mcp:%s` for %s — tools: %s", req.Agent, req.Server, req.Subject, req.Tool)
	if req.Chat.Platform != "" {
		text += "\nAsked in " + req.Chat.String()
	}
	return text + quorum.Needs(req.Quorum, req.SelfApprove, "approve", "one Deny denies") + quorum.Line(req.Votes, req.Quorum)
}

// grantOutcomeText is what a decided request's messages show.
func grantOutcomeText(req GrantRequest) string {
	verb := "Approved"
	if req.Status == StatusDenied {
		verb = "Denied"
	}
	return fmt.Sprintf("%s %s `mcp:%s` (%s) for %s — %s", decidedIcon(req.Status), verb, req.Server, req.Tool, req.Subject, req.DecidedBy) +
		quorum.Line(req.Votes, req.Quorum)
}
