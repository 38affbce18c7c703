package askuser

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/channels"
)

// MaxAnswer bounds a typed answer (characters); what is longer is cut,
// saying so in the answer the agent reads.
const MaxAnswer = 4000

// TakeAnswer takes a chat message as the answer to the question waiting
// in session for its sender (a bot.AnswerTaker): the message is then the
// call's result, not a message of the session. The answer is stored before
// TakeAnswer returns true, with the message's id, so a redelivery is known
// and taken again without a second answer. A message with files is a
// message of its own, and so is one that loses the race to a press.
func (s *Service) TakeAnswer(ctx context.Context, session string, in channels.Inbound, text string) (bool, error) {
	who := in.Identity()
	if in.UserID == "" || len(in.Attachments) > 0 || strings.TrimSpace(text) == "" {
		return false, nil
	}
	q, found, err := s.o.Store.AnswerTarget(ctx, session, who, in.ExternalID)
	if err != nil {
		return false, fmt.Errorf("find the question %s answers: %w", who, err)
	}
	if !found || q.Chat.Platform != in.Platform || q.Chat.ChatID != in.ChatID {
		return false, nil
	}
	if q.Status != StatusPending {
		// A redelivery of the message that answered it: the answer stands;
		// resuming again is harmless (an idle run) and covers a crash
		// before the first resume.
		s.o.Logger.Info("typed answer delivered again", "question_id", q.ID, "external_id", in.ExternalID)
		s.resume(ctx, q)
		return true, nil
	}
	after, changed, err := s.o.Store.DecideQuestion(ctx, q.ID, Outcome{Status: StatusAnswered, Answer: capAnswer(text),
		By: who, How: ByText, ExternalID: in.ExternalID})
	switch {
	case err != nil:
		return false, fmt.Errorf("record the answer to question %s: %w", q.ID, err)
	case changed, in.ExternalID != "" && after.AnswerExternalID == in.ExternalID:
		// The second case: a retry of a commit whose answer was lost found
		// this message's answer stored.
		s.settled(ctx, after)
		s.resume(ctx, after)
		return true, nil
	case after.Status == StatusPending:
		// Its time is up: the message is a message of its own, read after
		// the agent hears nobody answered.
		if _, _, err := s.expire(ctx, after, true); err != nil {
			return false, err
		}
	}
	return false, nil
}

// capAnswer cuts a typed answer to MaxAnswer characters, saying so.
func capAnswer(text string) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) <= MaxAnswer {
		return text
	}
	return string([]rune(text)[:MaxAnswer]) + " […cut: the answer was longer]"
}
