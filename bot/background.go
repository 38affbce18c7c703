package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools"
)

// Background sessions. Work agents do for each other — a teammate's task,
// a subagent's job — runs in a session whose scope keeps the conversation
// it works for (tools.OriginOf). It runs on the lanes like a chat's
// session, for that conversation's chat, so approvals park and resume it
// and recovery continues it; but it shows no progress in the chat and its
// replies stay in the session. The feature that made the session owns it
// (RunInBackground): it may prepare each run and is told how each ended,
// so it can report the outcome where it belongs.

// SilentReply is the reply with which an agent says nothing to the chat
// (a lead that waits for its team). It is stored but never sent.
const SilentReply = "NO_REPLY"

// isSilent reports whether a reply is SilentReply.
func isSilent(text string) bool { return strings.TrimSpace(text) == SilentReply }

// background reports whether session works for another conversation (a
// team or subagent session): its runs show no progress in the chat and its
// replies are not sent there.
func background(session string) bool {
	return tools.ScopeOf(session) != tools.OriginOf(session)
}

// undelivered reports whether a reply stays in its session: a teammate's
// or subagent's replies do, and a silent reply is meant for nobody.
func undelivered(session, text string) bool {
	return background(session) || isSilent(text)
}

// ErrRunCancelled is the cause with which an owner cancels the context of
// a run it started (context.WithCancelCause): the run then ends as
// RunCancelled, whatever the agent returned, and is not retried.
var ErrRunCancelled = errors.New("run cancelled by the owner of its session")

// RunEnd says how a run of a background session ended.
type RunEnd int

// How a run of a background session ends.
const (
	// RunCompleted: the run ended with a final reply (Outcome.Text). From
	// recovery, it is a final reply a crash kept from the owner.
	RunCompleted RunEnd = iota + 1
	// RunParked: the run waits for an approval; the decision resumes it.
	RunParked
	// RunFailed: the run failed (Outcome.Reason, Outcome.ErrorID); the
	// failure is recorded in the session, so it is not retried.
	RunFailed
	// RunCancelled: the owner cancelled the run (ErrRunCancelled).
	RunCancelled
)

// Outcome is how a run of a background session ended.
type Outcome struct {
	End RunEnd
	// Text is the final reply of a completed run.
	Text string
	// Reason says in a few words why a run failed, and ErrorID finds the
	// details in the logs.
	Reason, ErrorID string
}

// SessionOwner is a feature's part in the runs of the background sessions
// it owns.
type SessionOwner interface {
	// Owns reports whether session is one of the owner's.
	Owns(session string) bool
	// Start prepares a run of session: it may narrow in (tools, iterations)
	// and returns the context the run goes under, which the owner may
	// cancel with ErrRunCancelled, and stop, called when the run is over.
	Start(ctx context.Context, session string, in *agentcore.RunInput) (context.Context, func())
	// Finished is told how a run of session ended.
	Finished(ctx context.Context, session string, out Outcome)
}

// RunInBackground makes owner the owner of the background sessions it
// Owns. Call it after NewRouter and before the first Handle: the owners are
// read without a lock.
func (r *Router) RunInBackground(owner SessionOwner) {
	r.owners = append(r.owners, owner)
}

// ownerOf returns the owner of a background session, or nil: a chat
// session, or a background session whose feature is off here (it runs
// without being prepared or told).
func (r *Router) ownerOf(session string) SessionOwner {
	if !background(session) {
		return nil
	}
	for _, o := range r.owners {
		if o.Owns(session) {
			return o
		}
	}
	return nil
}
