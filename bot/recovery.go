package bot

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// RecoverOlderThan is how old a session's last step must be before a
// periodic recovery pass takes it over. It only saves needless work: a live
// run holds its session lock, and recovered runs never wait for a lock.
const RecoverOlderThan = 3 * time.Second

// Recover finds sessions a crash (of this or another replica) left
// unfinished and completes them: runs the agent where a reply is missing,
// queues delivery where the reply exists but was never queued. It looks at
// every session whose newest message is older than olderThan, and returns
// how many sessions it picked up.
func (r *Router) Recover(ctx context.Context, olderThan time.Duration) (int, error) {
	return r.recoverSessions(ctx, UnfinishedQuery{OlderThan: olderThan})
}

// recoverSessions is Recover for the sessions q covers.
func (r *Router) recoverSessions(ctx context.Context, q UnfinishedQuery) (int, error) {
	if r.opts.Recovery == nil {
		return 0, nil
	}
	list, err := r.opts.Recovery.Unfinished(ctx, q)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range list {
		if _, err := agentcore.ParseSessionKey(u.Session); err != nil {
			continue
		}
		to, err := channels.ParseAddress(tools.OriginOf(u.Session))
		if err != nil || r.opts.Channels[to.Platform] == nil {
			continue // not for a chat, or its platform is off here
		}
		if background(u.Session) {
			// A team or subagent session: nothing of it goes to the chat
			// directly; it only ever needs a run.
			switch {
			case u.NeedsRun:
				if r.lanes.enqueue(laneJob{Session: u.Session, To: to, recovered: true}) {
					n++
				}
			default: // a subagent's result a crash kept from its parent
				if owner := r.ownerOf(u.Session); owner != nil {
					owner.Finished(ctx, u.Session, Outcome{End: RunCompleted, Text: u.Content})
				}
				n++
			}
			continue
		}
		if u.NeedsRun {
			if r.lanes.enqueue(laneJob{Session: u.Session, To: to, recovered: true}) {
				n++
			}
			continue
		}
		r.send(ctx, OutboxMessage{Session: u.Session, SourceSeq: u.LastSeq, To: to, Text: u.Content})
		n++
	}
	if n > 0 {
		r.log.Info("recovered unfinished sessions", "count", n)
	}
	return n, nil
}

// DefaultRecoveryInterval is how often RunRecovery looks for work left
// behind: a replica that died mid-run is taken over within about this plus
// the time its session locks take to be recognised as stale (its Redis
// heartbeat key's TTL, 3 s), when it had written to the session within
// RecoverJustWritten; within RecentRecoveryEvery when it had written within
// RecoverWrittenWithin; within FullRecoveryEvery otherwise. Each pass is one
// pass over the sessions table plus one index probe per session it looks
// at, and one query over pending approvals.
const DefaultRecoveryInterval = time.Second

// RecoverJustWritten is how far back most RunRecovery passes look: the
// sessions written to that recently, so a pass costs about as many probes
// as messages arrived in that time, not one per session active in the
// last minutes: the cost of a pass follows traffic, not the number of
// chats.
const RecoverJustWritten = 30 * time.Second

// RecentRecoveryEvery is how often a RunRecovery pass looks back
// RecoverWrittenWithin: it finds a run that died after going without a
// write for longer than RecoverJustWritten (a slow model call or tool).
const RecentRecoveryEvery = 30 * time.Second

// RecoverWrittenWithin is how far back a recent pass looks: far more than a
// run goes without writing to its session.
const RecoverWrittenWithin = 10 * time.Minute

// FullRecoveryEvery is how often a RunRecovery pass looks at every session,
// not only the recent ones: a session can stay unfinished longer than
// RecoverWrittenWithin when its runs could not start meanwhile (Redis down,
// so no session lock).
const FullRecoveryEvery = 5 * time.Minute

// RunRecovery calls Recover now, for everything (nothing of this process
// runs yet), and then every interval until ctx ends (see
// DefaultRecoveryInterval for what each pass looks at).
func (r *Router) RunRecovery(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultRecoveryInterval
	}
	passes := recoveryPasses{fullEvery: FullRecoveryEvery, recentEvery: RecentRecoveryEvery}
	repeat(ctx, interval, r.log, "recovery pass", func(ctx context.Context) error {
		began := time.Now()
		q := passes.next(began)
		_, err := r.recoverSessions(ctx, q)
		passes.ran(q, began, err)
		return err
	})
}

// recoveryPasses decides what each RunRecovery pass looks at: the first,
// every session of any age; later ones, sessions whose newest message is
// older than RecoverOlderThan, and of those the ones written to within
// RecoverJustWritten, or within RecoverWrittenWithin once recentEvery has
// passed since the last such pass that succeeded, or all of them once
// fullEvery has passed since the last full pass that succeeded.
type recoveryPasses struct {
	fullEvery, recentEvery time.Duration
	started                bool
	lastFull, lastRecent   time.Time // when the last successful pass of each kind began
}

// next is the query for a pass beginning at now.
func (p *recoveryPasses) next(now time.Time) UnfinishedQuery {
	if !p.started {
		return UnfinishedQuery{}
	}
	q := UnfinishedQuery{OlderThan: RecoverOlderThan}
	switch {
	case now.Sub(p.lastFull) >= p.fullEvery:
	case now.Sub(p.lastRecent) >= p.recentEvery:
		q.WrittenWithin = RecoverWrittenWithin
	default:
		q.WrittenWithin = RecoverJustWritten
	}
	return q
}

// ran records how the pass for q, begun at began, went. A full pass counts
// as a recent one too.
func (p *recoveryPasses) ran(q UnfinishedQuery, began time.Time, err error) {
	p.started = true
	if err != nil {
		return
	}
	if q.WrittenWithin <= 0 {
		p.lastFull = began
	}
	if q.WrittenWithin <= 0 || q.WrittenWithin >= RecoverWrittenWithin {
		p.lastRecent = began
	}
}
