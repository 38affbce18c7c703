package askuser

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/channels"
)

// Cancel withdraws the questions waiting in in's chat for its sender
// (/cancel): their messages show it, and once the confirmation is queued
// their runs resume and the agent hears the question was withdrawn.
// handled is false when nothing of the sender's was waiting, so /cancel
// goes on to their approval requests; text is what to answer ("" when the
// confirmation was queued already).
func (s *Service) Cancel(ctx context.Context, in channels.Inbound) (text string, handled bool) {
	if s.chat == nil {
		return "", false
	}
	who := in.Identity()
	session := s.chat.SessionKey(ctx, in.Address())
	pending, err := s.o.Store.PendingQuestionsOf(ctx, session, who)
	if err != nil {
		s.o.Logger.Error("list pending questions", "session", session, "err", err)
		return "Could not withdraw the question right now (storage unavailable). Try /cancel again in a minute.", true
	}
	var done []Question
	for _, q := range pending {
		after, changed, err := s.o.Store.DecideQuestion(ctx, q.ID, Outcome{Status: StatusCancelled, By: who})
		if err != nil {
			s.o.Logger.Error("withdraw question", "question_id", q.ID, "err", err)
			return "Could not withdraw the question right now (storage unavailable). Try /cancel again in a minute.", true
		}
		if changed {
			s.settled(ctx, after)
			done = append(done, after)
		}
	}
	if len(done) == 0 {
		return "", false
	}
	msg := "Withdrawn the question: I'll tell the agent you did not answer."
	if len(done) > 1 {
		msg = fmt.Sprintf("Withdrew %d questions: I'll tell the agent you did not answer.", len(done))
	}
	s.chat.Notify(ctx, in, msg)
	for _, q := range done {
		s.resume(ctx, q)
	}
	return "", true
}
