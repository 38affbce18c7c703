// Package channels defines the contract between the daemon and the chat platforms:
// what an inbound message or button press looks like, what an outbound message
// is, and the small Channel interface every platform adapter implements.
package channels

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Address names one conversation on one platform: a chat, and optionally a
// thread inside it.
type Address struct {
	Platform string // "telegram", "slack", "discord", "console"
	ChatID   string // platform's stable chat/channel id
	ThreadID string // optional thread / topic id
}

// String renders the address as platform:chat[:thread].
func (a Address) String() string {
	if a.ThreadID == "" {
		return a.Platform + ":" + a.ChatID
	}
	return a.Platform + ":" + a.ChatID + ":" + a.ThreadID
}

// ParseAddress parses platform:chat[:thread] as produced by Address.String.
func ParseAddress(s string) (Address, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return Address{}, fmt.Errorf("address %q: want platform:chat_id[:thread_id]", s)
	}
	a := Address{Platform: parts[0], ChatID: parts[1]}
	if len(parts) == 3 {
		a.ThreadID = parts[2]
	}
	return a, nil
}

// Identity renders a user identity as platform:user_id, the only form the
// daemon uses to recognise people (never display names).
func Identity(platform, userID string) string { return platform + ":" + userID }

// Inbound is one event from a platform: a text message or a button press.
type Inbound struct {
	Platform   string
	ChatID     string
	ThreadID   string
	UserID     string // platform's stable user id
	UserName   string // display name; for humans only, never for decisions
	Text       string
	Direct     bool         // a one-to-one chat with the bot
	MessageID  string       // platform id of the message (for replies)
	Press      *ButtonPress // set when the event is a button press
	ExternalID string       // platform-unique id of the update, for dedupe
	// Attachments are the files sent with the message; Text is then the
	// caption.
	Attachments []Attachment
}

// Address returns where the event came from.
func (in Inbound) Address() Address {
	return Address{Platform: in.Platform, ChatID: in.ChatID, ThreadID: in.ThreadID}
}

// Identity returns the sender as platform:user_id.
func (in Inbound) Identity() string { return Identity(in.Platform, in.UserID) }

// ButtonPress is a press on a button the daemon sent earlier.
type ButtonPress struct {
	ID        string // platform id of the press, used to answer it
	Data      string // the Button.Data that was attached
	MessageID string // the message carrying the button
}

// Button is one inline button. Data travels to the platform and back, so it
// must be short (Telegram allows 64 bytes) and carry no state beyond an id.
type Button struct {
	Label string
	Data  string
}

// Outbound is a message to send. Text is Markdown; each adapter renders it in
// its platform's format and splits it to fit the platform's limits.
type Outbound struct {
	To      Address
	Text    string
	Buttons [][]Button // rows of buttons, attached to the last part
	ReplyTo string     // optional platform message id to reply to
	// Key optionally names this message for deduplication: sends with the
	// same Key are the same message, and a platform that can deduplicate
	// (Discord's nonce) shows it once.
	Key string
	// File, when set, is sent with Text as its caption. An adapter that
	// cannot send files returns an ErrPermanent error.
	File *File
	// Replaces, when set, are the live messages (LiveAnswerer) that showed
	// this answer while it was written, in order: the message is delivered
	// with FinishLive, in their place.
	Replaces []string
}

// Handler receives inbound events from a channel. It returns nil once the
// event is durably stored, or was deliberately dropped (a duplicate, a
// refused sender, a rate-limited or empty message). A non-nil error means
// the event was not stored: the channel must not confirm it to the
// platform, so that it is delivered again (Telegram: no later offset;
// Slack: no acknowledgement, or a 5xx answer), or, where the platform
// cannot redeliver (Discord), call the handler again until it succeeds.
type Handler func(ctx context.Context, in Inbound) error

// Channel is one chat platform connection.
type Channel interface {
	// Platform returns the platform name used in addresses and identities.
	Platform() string
	// Start connects and delivers events to h until ctx is cancelled. It
	// returns nil on cancellation and an error only when it cannot go on.
	Start(ctx context.Context, h Handler) error
	// Send delivers msg and returns the platform id of the last message sent
	// (the one carrying the buttons, if any).
	Send(ctx context.Context, msg Outbound) (messageID string, err error)
}

// Editor is implemented by channels that can edit a message in place.
type Editor interface {
	// Edit replaces the text (and buttons; nil removes them) of messageID.
	Edit(ctx context.Context, to Address, messageID string, msg Outbound) error
}

// Typer is implemented by channels that can show a "typing…" indicator.
type Typer interface {
	Typing(ctx context.Context, to Address) error
}

// TopicCreator is implemented by channels with forum topics (Telegram
// forum groups).
type TopicCreator interface {
	// CreateTopic creates a topic called name in chat and returns the
	// topic's address (chat plus its thread id).
	CreateTopic(ctx context.Context, chat Address, name string) (Address, error)
}

// Deleter is implemented by channels that can delete a message the bot
// sent (a progress note that is no longer needed).
type Deleter interface {
	// Delete removes messageID from the conversation at to. A message that
	// is already gone is not an error.
	Delete(ctx context.Context, to Address, messageID string) error
}

// PressAnswerer is implemented by channels whose button presses must be
// acknowledged (Telegram callback queries, Discord interactions).
type PressAnswerer interface {
	// AnswerPress acknowledges a press, showing text to the presser if set.
	AnswerPress(ctx context.Context, press ButtonPress, text string) error
}

// ReadyChecker is implemented by channels that can tell whether they are
// currently connected. A nil error means ready.
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

// RetryAfterError says the platform asked us to slow down. Senders should
// wait After before trying again.
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("rate limited by platform, retry after %s: %v", e.After, e.Err)
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

// ErrPermanent marks a send failure that retrying cannot fix (chat not found,
// bot blocked, message malformed). Wrap it with %w.
var ErrPermanent = errors.New("permanent delivery failure")

// WebhookProvider is implemented by channels that receive events over
// HTTP (Slack's Events API, Telegram webhooks). The daemon mounts the
// handler at /webhooks/<platform>.
type WebhookProvider interface {
	Webhook() http.Handler
}
