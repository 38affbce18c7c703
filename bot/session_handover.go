package bot

import (
	"context"
	"errors"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Work handed from one session to another (a task to a teammate, a result
// to a subagent's parent) is a user message stored in the receiving
// session before its run is queued, so a crash in between loses nothing:
// recovery runs a session whose last message is unanswered. Features hand
// work over through these methods of the Router.

// HandOver stores text as a user message in session (idempotent by
// externalID) and, when wake is set, queues a run of the session. It
// reports whether the message is stored.
func (r *Router) HandOver(ctx context.Context, session, text, externalID string, wake bool) bool {
	msg := agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: externalID}
	if _, err := r.opts.History.Append(ctx, session, msg); err != nil && !errors.Is(err, agentcore.ErrDuplicate) {
		r.log.Error("team hand-over not stored", "session", session, "external_id", externalID, "err", err)
		return false
	}
	if wake {
		r.Wake(ctx, session)
	}
	return true
}

// Wake queues a run of a session that has new work in it: a chat session,
// or a team or subagent session, which runs for its conversation's chat.
func (r *Router) Wake(ctx context.Context, session string) {
	to, err := channels.ParseAddress(tools.OriginOf(session))
	if err != nil || !r.Serves(to) {
		r.log.Warn("work for a conversation not served here; it stays in the session", "session", session)
		return
	}
	if !r.lanes.enqueue(laneJob{Session: session, To: to}) {
		r.log.Info("not running now (shutting down); recovery will", "session", session)
	}
}

// Serves reports whether this process has a channel for addr's platform,
// so runs for that chat can happen here.
func (r *Router) Serves(addr channels.Address) bool {
	return r.opts.Channels[addr.Platform] != nil
}
