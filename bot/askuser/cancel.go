package askuser

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/channels"
)

// Cancel withdraws the questions waiting in in's chat for its sender, or
// any question waiting there when admin (/cancel): a group is not left
// waiting an hour for someone who went away. Their messages show it, and
// once the confirmation is queued their runs resume and the agent hears
// the question was withdrawn. handled is false when nothing it may
// withdraw was waiting, so /cancel goes on to approval requests; text is
// what to answer ("" when the confirmation was queued already).
func (s *Service) Cancel(ctx context.Context, in channels.Inbound, admin bool) (text string, handled bool) {
	if s.chat == nil {
		return "", false
	}
	who := in.Identity()
	session := s.chat.SessionKey(ctx, in.Address())
	pending, err := s.o.Store.PendingQuestionsOf(ctx, session)
	if err != nil {
		s.o.Logger.Error("list pending questions", "session", session, "err", err)
		return "Could not withdraw the question right now (storage unavailable). Try /cancel again in a minute.", true
	}
	var done []Question
	for _, q := range pending {
		if q.Asker != who && !admin {
			continue
		}
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
	msg := "Withdrawn the question: I'll tell the agent it was not answered."
	if len(done) > 1 {
		msg = fmt.Sprintf("Withdrew %d questions: I'll tell the agent they were not answered.", len(done))
	}
	s.chat.Notify(ctx, in, msg)
	for _, q := range done {
		s.resume(ctx, q)
	}
	return "", true
}
