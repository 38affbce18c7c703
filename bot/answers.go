package bot

import (
	"context"

	"github.com/switchboard-chat/switchboard/channels"
)

// AnswerTaker is given each chat message before it is stored in session,
// with its text as it would be stored, and reports whether the message was
// taken as the answer to something a run waits for (an ask_user question):
// a taken message is not stored as a message of the session. It must have
// stored what it took durably before returning true, and recognise a
// redelivery of a message it took (by its ExternalID) as taken again; an
// error leaves the message unconfirmed, so the platform delivers it again.
type AnswerTaker func(ctx context.Context, session string, in channels.Inbound, text string) (taken bool, err error)

// TakeAnswers makes t see every chat message before it is stored (one
// taker; a later call replaces it). Call it after NewRouter and before
// the first Handle: the taker is read without a lock.
func (r *Router) TakeAnswers(t AnswerTaker) { r.answers = t }
