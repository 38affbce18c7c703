package askuser

import (
	"context"
	"errors"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Decide handles a press on an answer button (bot.PressHandler): only the
// person asked answers; anyone else, and forged or stale data, changes
// nothing. Every press is answered.
func (s *Service) Decide(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	q, err := s.o.Store.GetQuestion(ctx, id)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		s.chat.AnswerPress(ctx, in, "This question no longer exists.")
		return
	case err != nil:
		s.o.Logger.Error("load question", "question_id", id, "err", err)
		s.chat.AnswerPress(ctx, in, "Could not record your answer (storage unavailable); press again in a moment.")
		return
	case presser != q.Asker:
		s.o.Logger.Warn("answer press by someone not asked", "question_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "Only "+q.Asker+" can answer this.")
		return
	}
	option, ok := optionOf(q, choice)
	if !ok {
		s.chat.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	after, changed, err := s.o.Store.DecideQuestion(ctx, id, Outcome{Status: StatusAnswered, Answer: option, By: presser, How: ByPress})
	switch {
	case err != nil:
		s.o.Logger.Error("answer question", "question_id", id, "err", err)
		s.chat.AnswerPress(ctx, in, "Could not record your answer (storage unavailable); press again in a moment.")
	case changed, after.Status == StatusAnswered && after.How == ByPress && after.AnsweredBy == presser && after.Answer == option:
		// The second case: this press again (or a retry whose commit's
		// answer was lost); resuming again is harmless.
		s.chat.AnswerPress(ctx, in, "Answered: "+option)
		s.settled(ctx, after)
		s.resume(ctx, after)
	case after.Status == StatusPending:
		// Its time is up: expire it here, as the expiry loop would.
		if _, _, err := s.expire(ctx, after, true); err != nil {
			s.o.Logger.Error("expire question", "question_id", id, "err", err)
		}
		s.chat.AnswerPress(ctx, in, "Too late: this question expired.")
	default:
		s.chat.AnswerPress(ctx, in, "Already settled: "+statusLine(after))
	}
}

// statusLine says in one line how q stands, for a press that came late.
func statusLine(q Question) string {
	switch q.Status {
	case StatusAnswered:
		return "answered " + q.Answer + "."
	case StatusCancelled:
		return "withdrawn."
	}
	return "nobody answered in time."
}
