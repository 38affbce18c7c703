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
// every session whose newest message is older than olderThan, a page at a
// time, and returns how many sessions it picked up.
func (r *Router) Recover(ctx context.Context, olderThan time.Duration) (int, error) {
	total, q := 0, UnfinishedQuery{OlderThan: olderThan}
	for {
		n, last, err := r.recoverSessions(ctx, q)
		total += n
		if err != nil || last == "" {
			return total, err
		}
		q.After = last
	}
}

// recoverSessions is Recover for the sessions q covers. It returns how many
// it picked up and the last session listed ("" when none was).
func (r *Router) recoverSessions(ctx context.Context, q UnfinishedQuery) (int, string, error) {
	if r.opts.Recovery == nil {
		return 0, "", nil
	}
	list, err := r.opts.Recovery.Unfinished(ctx, q)
	if err != nil || len(list) == 0 {
		return 0, "", err
	}
	n := 0
	for _, u := range list {
		if r.recoverSession(ctx, u) {
			n++
		}
	}
	if n > 0 {
		r.log.Info("recovered unfinished sessions", "count", n)
	}
	return n, list[len(list)-1].Session, nil
}

// recoverSession completes u and reports whether it picked it up.
func (r *Router) recoverSession(ctx context.Context, u Unfinished) bool {
	if _, err := agentcore.ParseSessionKey(u.Session); err != nil {
		return false
	}
	to, err := channels.ParseAddress(tools.OriginOf(u.Session))
	if err != nil || r.opts.Channels[to.Platform] == nil {
		return false // not for a chat, or its platform is off here
	}
	switch {
	case u.NeedsRun:
		return r.lanes.enqueue(laneJob{Session: u.Session, To: to, recovered: true})
	case background(u.Session):
		// A team or subagent session: nothing of it goes to the chat
		// directly. Its final reply is a subagent's result a crash may
		// have kept from its parent.
		if owner := r.ownerOf(u.Session); owner != nil {
			owner.Finished(ctx, u.Session, Outcome{End: RunCompleted, Text: u.Content})
		}
		return true
	default:
		r.send(ctx, OutboxMessage{Session: u.Session, SourceSeq: u.LastSeq, To: to, Text: u.Content})
		return true
	}
}

// DefaultRecoveryInterval is how often RunRecovery looks for work left
// behind: a replica that died mid-run is taken over within about this plus
// the time its session locks take to be recognised as stale (its Redis
// heartbeat key's TTL, 3 s), when it had written to the session within
// RecoverJustWritten, and within RecentRecoveryEvery when within
// RecoverWrittenWithin. Each pass reads the messages, decisions and
// answers of its window by time index, and probes the newest message of
// each session they belong to: its cost follows traffic, not the number of
// chats or messages stored.
const DefaultRecoveryInterval = time.Second

// RecoverJustWritten is how far back most RunRecovery passes look at
// most. Each looks back only to where the previous successful pass's
// window ended, less recoverySlack, so a pass costs about a probe per
// session active in the last interval, not in the last 30 seconds.
const RecoverJustWritten = 30 * time.Second

// recoverySlack is how much each pass's window overlaps the previous
// one's: a message's created_at is when its transaction began, and it is
// seen only once that commits.
const recoverySlack = 2 * time.Second

// RecentRecoveryEvery is how often a RunRecovery pass looks back
// RecoverWrittenWithin: it finds a run that died after going without a
// write for longer than RecoverJustWritten (a slow model call or tool).
const RecentRecoveryEvery = 30 * time.Second

// RecoverWrittenWithin is how far back a recent pass looks: far more than a
// run goes without writing to its session (MaxRunDuration, plus lockWait
// for its turn).
const RecoverWrittenWithin = time.Hour

// RecoverAllAfter is how long recent passes may keep failing (PostgreSQL
// unreachable) before RunRecovery looks at every session once: soon enough
// that nothing a crash left behind meanwhile has dropped out of a recent
// pass's window, RecoverWrittenWithin, minus the longest a run goes without
// writing.
const RecoverAllAfter = RecoverWrittenWithin / 2

// RunRecovery looks at every session now (nothing of this process runs
// yet), and then every interval at the recent ones until ctx ends (see
// DefaultRecoveryInterval for what each pass looks at).
func (r *Router) RunRecovery(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultRecoveryInterval
	}
	passes := recoveryPasses{recentEvery: RecentRecoveryEvery, allAfter: RecoverAllAfter}
	repeat(ctx, interval, r.log, "recovery pass", func(ctx context.Context) error {
		began := time.Now()
		q := passes.next(began)
		_, last, err := r.recoverSessions(ctx, q)
		passes.ran(q, began, last, err)
		return err
	})
}

// recoveryPasses decides what each RunRecovery pass looks at. The first
// pass looks at every session of any age, a page per pass until a page
// lists none. Later ones look at sessions whose newest message is older
// than RecoverOlderThan, and of those the ones active since the previous
// pass (RecoverJustWritten at most), or within RecoverWrittenWithin once recentEvery has
// passed since the last such pass that succeeded, or all of them once
// allAfter has.
type recoveryPasses struct {
	recentEvery, allAfter time.Duration
	started               bool
	page                  *UnfinishedQuery // the next page of a pass over every session
	allBegan              time.Time        // when that pass began
	lastRecent            time.Time        // when the last successful recent or full pass began
	lastAny               time.Time        // when the last successful pass of any kind began
}

// next is the query for a pass beginning at now.
func (p *recoveryPasses) next(now time.Time) UnfinishedQuery {
	q := UnfinishedQuery{OlderThan: RecoverOlderThan}
	switch {
	case !p.started:
		return UnfinishedQuery{}
	case p.page != nil:
		return *p.page
	case now.Sub(p.lastRecent) >= p.allAfter:
	case now.Sub(p.lastRecent) >= p.recentEvery:
		q.WrittenWithin = RecoverWrittenWithin
	default:
		q.WrittenWithin = min(now.Sub(p.lastAny)+RecoverOlderThan+recoverySlack, RecoverJustWritten)
	}
	return q
}

// ran records how the pass for q, begun at began, went; last is the last
// session it listed. A failed page is asked again; a full pass counts as a
// recent one once its last page lists none.
func (p *recoveryPasses) ran(q UnfinishedQuery, began time.Time, last string, err error) {
	p.started = true
	if err == nil && p.page == nil {
		p.lastAny = began
	}
	switch {
	case err != nil:
	case q.WrittenWithin >= RecoverWrittenWithin:
		p.lastRecent = began
	case q.WrittenWithin > 0:
	case last != "":
		if q.After == "" {
			p.allBegan = began
		}
		next := q
		next.After = last
		p.page = &next
	default:
		if q.After == "" {
			p.allBegan = began
		}
		p.page, p.lastRecent = nil, p.allBegan
	}
}
