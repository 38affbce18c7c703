package bot

import (
	"context"
	"errors"
	"go.opentelemetry.io/otel/trace"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// Deduper remembers inbound event ids for a while so a redelivered event is
// handled once. Redis implements it (SET NX with TTL).
type Deduper interface {
	// FirstSeen records key and reports whether it was new.
	FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Rate is a limit of Count events per Per.
type Rate struct {
	Count int
	Per   time.Duration
}

// Limiter is a shared rate limiter (Redis GCRA).
type Limiter interface {
	// Allow takes one event from key's bucket. When not allowed, retryAfter
	// says when the next event would be.
	Allow(ctx context.Context, key string, r Rate) (allowed bool, retryAfter time.Duration, err error)
}

// Notice records that a one-time notice was given, so it is not repeated
// (e.g. "you are rate limited"). Redis implements it with SET NX + TTL.
type Notice = Deduper

// Identities is the durable allowlist of people who may talk to agents.
type Identities interface {
	// IsAllowed reports whether identity (platform:user_id) is allowed.
	IsAllowed(ctx context.Context, identity string) (bool, error)
	// Allow adds identity to the allowlist; by names who allowed it.
	Allow(ctx context.Context, identity, displayName, by string) error
}

// Locker hands out short-lived distributed locks (Redis). A lane holds the
// lock of its session while an agent runs, so two replicas never run the same
// session at once.
type Locker interface {
	// Obtain takes key for ttl, or returns ErrLocked when someone holds it.
	// The returned release func gives it back; refresh extends it by ttl.
	Obtain(ctx context.Context, key string, ttl time.Duration) (l Lock, err error)
}

// Lock is a held distributed lock.
type Lock interface {
	Refresh(ctx context.Context, ttl time.Duration) error
	Release(ctx context.Context) error
}

// ErrLocked is returned by Locker.Obtain when the lock is held elsewhere.
var ErrLocked = errors.New("lock held elsewhere")

// OutboxRow names one outbox row: its id and, for a reply, the session
// message it delivers. A failover to an asynchronous standby can lose a
// row the dispatcher still holds and hand its id to a later row; the
// session and seq tell the two apart, so settling the lost row never
// touches the new one.
type OutboxRow struct {
	ID        int64
	Session   string // "" for system notices
	SourceSeq int64  // 0 for system notices
}

// Row names m's row.
func (m OutboxMessage) Row() OutboxRow {
	return OutboxRow{ID: m.ID, Session: m.Session, SourceSeq: m.SourceSeq}
}

// OutboxMessage is a reply waiting to be delivered.
type OutboxMessage struct {
	ID      int64
	Session string // session key the reply belongs to ("" for system notices)
	// SourceSeq is the session message the reply delivers (0 for notices);
	// at most one outbox row exists per (Session, SourceSeq).
	SourceSeq int64
	To        channels.Address
	Text      string
	Buttons   [][]channels.Button
	ReplyTo   string
	// File, when set, is sent with Text as its caption: a photo, voice
	// message or document stored in PostgreSQL (bot/media), opened only
	// when it is delivered.
	File *OutboxFile
	// Key, when set, names what the row delivers once: a second row with
	// the same Key is not stored (Enqueue). A tool that sends sets it from
	// its call, so a call run again after a crash sends nothing twice.
	Key string
	// Replaces, when set, are the live messages that showed the reply
	// while it was written (bot/stream): the row is delivered in their
	// place (channels.LiveAnswerer.FinishLive), and storing it ends its
	// session's live answer (LiveStore).
	Replaces []string
	Attempts int
	// Trace is the span of the run that wrote the row, when it is handed
	// to the dispatcher in memory; its send continues that trace. Not
	// stored.
	Trace trace.SpanContext
}

// OutboxFile is the file an outbox row sends, by reference to the stored
// attachment (bot/media).
type OutboxFile struct {
	// SHA256 is the stored content's key.
	SHA256 string
	// Kind is channels.KindPhoto, KindVoice or KindDocument.
	Kind string
	// Name is the file name shown in the chat (already safe).
	Name string
	// Type is the MIME type.
	Type string
	// Size is the content's length in bytes.
	Size int64
}

// Outbox is the durable queue of replies. Postgres implements it.
type Outbox interface {
	// Enqueue stores m and returns its id. A second row for the same
	// (Session, SourceSeq) with SourceSeq > 0, or with the same non-empty
	// Key, is ignored and returns the id of the first.
	Enqueue(ctx context.Context, m OutboxMessage) (int64, error)
	// EnqueueClaimed stores m like Enqueue and, in the same statement,
	// claims it for claim (counting the attempt) unless another pending row
	// of its chat must be delivered first; the claimer then delivers it
	// without a Claim. m comes back with its ID and Attempts.
	EnqueueClaimed(ctx context.Context, m OutboxMessage, claim Claim) (row OutboxMessage, claimed bool, err error)
	// Claim leases up to limit due messages to owner for lease, oldest
	// first. A message whose lease expired can be claimed again. With
	// beat, when it claims any message it also writes owner's Heartbeat,
	// in the same statement (see Liveness.Pin).
	Claim(ctx context.Context, owner string, limit int, lease time.Duration, beat bool) ([]OutboxMessage, error)
	// MarkSentAll records deliveries, each with the platform's message id.
	MarkSentAll(ctx context.Context, sent []Sent) error
	// Retry releases the row to be tried again at `at`.
	Retry(ctx context.Context, row OutboxRow, at time.Time, reason string) error
	// Fail gives up on the row for good.
	Fail(ctx context.Context, row OutboxRow, reason string) error
	// InsertReply stores a final reply as History.Insert does and its
	// outbox row m (Session and SourceSeq set to the reply's) as
	// EnqueueClaimed does, in one transaction, so no crash leaves a reply
	// stored but not queued. The commit is durable before it returns, so
	// before the reply is sent: a PostgreSQL crash never makes the chat
	// see an answer twice.
	InsertReply(ctx context.Context, session string, after int64, reply agentcore.Message, m OutboxMessage, claim Claim) (StoredReply, error)
	// AppendReply stores reply at the end of the session as History.Append
	// does, and m with it, as InsertReply does.
	AppendReply(ctx context.Context, session string, reply agentcore.Message, m OutboxMessage, claim Claim) (StoredReply, error)
	// Heartbeats: rows claimed by an owner whose heartbeat went stale are
	// claimed again at once (see Liveness).
	Heartbeats
}

// Claim asks for an outbox row to be claimed as it is written: by Owner
// (a dispatcher) for Lease. A zero Claim asks for none.
type Claim struct {
	Owner string
	Lease time.Duration
}

// Sent is one delivered outbox row.
type Sent struct {
	OutboxRow
	PlatformMessageID string
}

// StoredReply is what Outbox.InsertReply or AppendReply stored.
type StoredReply struct {
	Seq     int64         // the reply's seq
	Moved   int           // user messages that moved behind it
	Row     OutboxMessage // its outbox row, with ID and Attempts
	Claimed bool          // Row was claimed for the Claim given
}

// Unfinished is a session whose last step was not followed through: the
// newest message is a user or tool message (the agent must run) or a final
// assistant reply with no outbox row (it must be delivered).
type Unfinished struct {
	Session string
	LastSeq int64
	// NeedsRun is true when the agent must run; false when only the final
	// reply (Content) must be delivered.
	NeedsRun bool
	Content  string
}

// UnfinishedQuery says which sessions Recovery.Unfinished looks at.
type UnfinishedQuery struct {
	// OlderThan leaves out sessions whose newest message is younger than
	// this, so live runs on other replicas are left alone.
	OlderThan time.Duration
	// WrittenWithin, when positive, looks only at the sessions with a
	// message stored, an approval decided or a question settled within
	// this long (and longer ago than OlderThan): all a crash that long ago
	// can have left behind. Zero looks at every session, a page at a time.
	WrittenWithin time.Duration
	// After, when WrittenWithin is zero, starts the page after this session
	// key: the last one the previous page listed.
	After string
}

// Recovery finds work a crash left behind.
type Recovery interface {
	// Unfinished lists the sessions q covers that were left unfinished.
	Unfinished(ctx context.Context, q UnfinishedQuery) ([]Unfinished, error)
}
