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
// queues delivery where the reply exists but was never queued. It returns
// how many sessions it picked up.
func (r *Router) Recover(ctx context.Context, olderThan time.Duration) (int, error) {
	if r.opts.Recovery == nil {
		return 0, nil
	}
	list, err := r.opts.Recovery.Unfinished(ctx, olderThan)
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
				r.finishSub(ctx, u.Session, tools.SubCompleted, u.Content)
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
// heartbeat key's TTL, 3 s). Each pass is one query over the sessions
// table (one index probe per session) and one over pending approvals.
const DefaultRecoveryInterval = time.Second

// RunRecovery calls Recover now, for everything (nothing of this process
// runs yet), and then every interval until ctx ends. Each pass also expires
// the approvals whose time is up, resuming their parked runs.
func (r *Router) RunRecovery(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultRecoveryInterval
	}
	olderThan := time.Duration(0)
	repeat(ctx, interval, r.log, "recovery pass", func(ctx context.Context) error {
		_, err := r.Recover(ctx, olderThan)
		if err == nil && r.opts.Approvals != nil {
			_, err = r.opts.Approvals.ExpireDue(ctx)
		}
		olderThan = RecoverOlderThan
		return err
	})
}
