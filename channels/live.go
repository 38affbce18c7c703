package channels

import "context"

// LiveAnswerer is implemented by channels that can show an answer while
// the model writes it: a message (or, on Telegram private chats, a draft)
// updated in place while the run goes on, and made into the final, stored
// reply when it is delivered.
//
// The daemon (bot/stream) calls BeginLive with the first words and
// UpdateLive with the whole answer so far, at most about once a second per
// chat; text is Markdown with its code fences closed, which the adapter
// renders as it renders any message. An answer longer than LiveLimit goes
// on in a new live message (a second BeginLive).
//
// The final text is delivered by the dispatcher from the outbox: an
// Outbound whose Replaces lists the live messages, in order, handed to
// FinishLive.
type LiveAnswerer interface {
	// LiveLimit is the longest Markdown text, in runes, one live message
	// shows once rendered.
	LiveLimit() int
	// BeginLive shows text as a new live answer at to (replying to
	// replyTo when set) for asker, the platform user id of the person
	// asking ("" when unknown; Slack streams in channels to one person),
	// and returns its id. A 429 is a *RetryAfterError.
	BeginLive(ctx context.Context, to Address, replyTo, asker, text string) (id string, err error)
	// UpdateLive replaces the text of live answer id with text, the whole
	// of that message so far. A 429 is a *RetryAfterError.
	UpdateLive(ctx context.Context, to Address, id, text string) error
	// FinishLive delivers msg in place of the live answers msg.Replaces:
	// split as Send splits it, the first parts edited into those messages,
	// the rest sent as new messages, and live messages left over deleted
	// (or, where that fails, edited to a short mark). It returns the
	// platform id of the last message. It must be safe to call again after
	// it failed midway (the dispatcher retries it): an edit to the text a
	// message already has is a success, and a live message that is gone
	// is replaced by a new one. Live answers that are not messages
	// (Telegram drafts) are simply superseded by the messages sent.
	FinishLive(ctx context.Context, msg Outbound) (messageID string, err error)
}
