package approvals

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/channels"
)

// ErrDangerousAlways refuses Always allow for a command the exec guard
// flagged dangerous: no such button is shown, so a press or an API call
// asking for it is stale or forged.
var ErrDangerousAlways = errors.New(`"Always allow" is not offered for a command flagged dangerous; allow once or deny`)

// ErrNoAlways refuses Always allow for a request with a verb (a skill to
// publish): it asks about one thing, so there is nothing to allow always.
var ErrNoAlways = errors.New(`"Always allow" is not offered for this request; decide it with its own buttons`)

// ErrNotApprover refuses a press by someone the approval's rule does not
// let vote.
var ErrNotApprover = quorum.ErrNotApprover

// ErrOwnRequest refuses the requester's own vote (matched as a person,
// whichever of their accounts pressed) when the rule does not let it count.
var ErrOwnRequest = quorum.ErrOwnRequest

// Decide handles a press on an approval button: only the approval's
// approvers vote, each person once; every press is answered.
func (s *Service) Decide(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	status, ok := map[string]string{choiceOnce: StatusAllowedOnce, choiceAlways: StatusAllowedAlways, choiceDeny: StatusDenied}[choice]
	if !ok {
		s.chat.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	a, outcome, err := s.vote(ctx, id, status, presser, true)
	switch {
	case errors.Is(err, ErrNotApprover):
		s.o.Logger.Warn("approval press by a non-approver", "approval_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "You may not decide this.")
	case errors.Is(err, ErrOwnRequest):
		s.o.Logger.Warn("approval press by its requester", "approval_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "You asked for this; another approver must decide.")
	case errors.Is(err, ErrNoAlways):
		s.chat.AnswerPress(ctx, in, "This button is no longer active.")
	case errors.Is(err, ErrDangerousAlways):
		s.o.Logger.Warn("always-allow press on a command flagged dangerous", "approval_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "\"Always allow\" is not offered for a command flagged dangerous; press Allow once or Deny.")
	case errors.Is(err, bot.ErrNotFound):
		s.chat.AnswerPress(ctx, in, "This request no longer exists.")
	case err != nil:
		s.chat.AnswerPress(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	default:
		s.chat.AnswerPress(ctx, in, pressAnswer(a, outcome))
	}
}

// pressAnswer tells the presser what their vote did.
func pressAnswer(a Approval, outcome VoteOutcome) string {
	switch outcome {
	case VoteCounted:
		return fmt.Sprintf("Your vote is counted: %d of %d.", allows(a), a.Quorum)
	case VoteRepeated:
		return "You voted already; another approver must decide."
	case VoteClosed, VoteLate:
		return "Already decided: " + statusText(a)
	}
	return "Done: " + strings.ToLower(outcomeWord(a)) + "."
}

// DecideAs votes status (StatusAllowedOnce, StatusAllowedAlways or
// StatusDenied) on approval id on behalf of by, who is trusted to decide
// (the admin API); the requester's own vote still counts only when the
// rule lets it. changed is true when the vote was recorded (it decided
// the approval, or counts towards its quorum).
func (s *Service) DecideAs(ctx context.Context, id, status, by string) (Approval, bool, error) {
	a, outcome, err := s.Vote(ctx, id, status, by)
	return a, err == nil && (outcome == VoteDecided || outcome == VoteCounted), err
}

// Vote is DecideAs with the outcome: what the vote did.
func (s *Service) Vote(ctx context.Context, id, status, by string) (Approval, VoteOutcome, error) {
	return s.vote(ctx, id, status, by, false)
}

// VoteAsApprover is Vote for someone who must be one of the approval's
// approvers, as for a button press (the admin console's decisions):
// ErrNotApprover otherwise.
func (s *Service) VoteAsApprover(ctx context.Context, id, status, by string) (Approval, VoteOutcome, error) {
	return s.vote(ctx, id, status, by, true)
}

// vote records by's vote on approval id and follows up on what it did: a
// decision edits the messages and resumes the run, a counted vote shows
// on every message, a vote after expiry expires it. With press, by must
// be one of the approval's approvers.
func (s *Service) vote(ctx context.Context, id, status, by string, press bool) (Approval, VoteOutcome, error) {
	if status != StatusAllowedOnce && status != StatusAllowedAlways && status != StatusDenied {
		return Approval{}, 0, fmt.Errorf("%q is not a decision", status)
	}
	cur, err := s.o.Store.GetApproval(ctx, id)
	if err != nil {
		if !errors.Is(err, bot.ErrNotFound) {
			s.o.Logger.Error("load approval", "approval_id", id, "err", err)
		}
		return Approval{}, 0, err
	}
	if err := quorum.People(s.o.People).Admit(s.ballotOf(cur), by, press); err != nil {
		return cur, 0, err
	}
	if status == StatusAllowedAlways && cur.Verb != "" {
		return cur, 0, ErrNoAlways
	}
	if status == StatusAllowedAlways && len(cur.Warnings) > 0 {
		return cur, 0, ErrDangerousAlways
	}
	a, outcome, err := s.o.Store.VoteApproval(ctx, id, Vote{Person: s.personOf(by), Identity: by, Choice: status})
	if err != nil {
		s.o.Logger.Error("vote on approval", "approval_id", id, "err", err)
		return a, 0, err
	}
	switch outcome {
	case VoteDecided:
		s.decided(ctx, a)
	case VoteCounted:
		s.o.Logger.Info("approval vote counted", "approval_id", id, "by", by, "votes", allows(a), "quorum", a.Quorum)
		s.showVotes(ctx, a)
	case VoteLate:
		// Its time is up: expire it here, as ExpireDue would, and let its
		// run hear that nobody answered in time.
		after, changed, err := s.o.Store.DecideApproval(ctx, id, StatusExpired, "system")
		if err != nil {
			return a, outcome, fmt.Errorf("expire approval: %w", err)
		}
		a = after
		if changed {
			s.o.Logger.Info("approval expired", "approval_id", id)
			s.finish(ctx, a)
			s.resume(ctx, a)
		}
	}
	return a, outcome, nil
}

// decided follows up a decision: an always-allow pattern, the edited
// messages, the run resumed.
func (s *Service) decided(ctx context.Context, a Approval) {
	s.o.Logger.Info("approval decided", "approval_id", a.ID, "status", a.Status, "by", a.DecidedBy)
	if a.Status == StatusAllowedAlways {
		if err := s.o.Store.AllowAlways(ctx, a.Tool, a.Pattern, a.DecidedBy); err != nil {
			s.o.Logger.Error("store always-allow pattern", "approval_id", a.ID, "err", err)
		}
	}
	s.finish(ctx, a)
	s.resume(ctx, a)
}

// showVotes edits every message about pending approval a to show its
// votes so far, keeping the approvers' buttons.
func (s *Service) showVotes(ctx context.Context, a Approval) {
	if s.o.Messages == nil {
		return
	}
	s.chat.ShowProgress(ctx, s.o.Messages, Kind, a.ID, func(m bot.DecisionMessage) (string, [][]channels.Button) {
		// A message not delivered yet is edited once it is, maybe after the
		// decision's own edit: it must not bring the buttons back then.
		if cur, err := s.o.Store.GetApproval(context.WithoutCancel(ctx), a.ID); err == nil && cur.Status != StatusPending {
			return outcomeText(cur, m.Role), nil
		}
		switch m.Role {
		case "requester":
			return requesterText(a), nil
		case RoleEscalated:
			return escalationText(a), buttonsFor(a)
		}
		return approvalText(a), buttonsFor(a)
	})
}

// allows counts a's allowing votes.
func allows(a Approval) int { return quorum.Allows(a.Votes) }
