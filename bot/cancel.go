package bot

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/channels"
)

// cmdCancel withdraws the sender's pending approval requests in this chat's
// session (an approver may withdraw anyone's); the approvers' buttons are
// removed. The confirmation is queued first, then the parked runs resume
// and tell the model the user cancelled, so their answers come after it.
func (r *Router) cmdCancel(ctx context.Context, in channels.Inbound, _ string) string {
	text, done := r.cancel(ctx, in)
	if len(done) == 0 {
		return text
	}
	r.notify(ctx, in, text)
	for _, a := range done {
		r.opts.Approvals.Resume(ctx, a)
	}
	return ""
}

// cancel withdraws the requests and says what it did.
func (r *Router) cancel(ctx context.Context, in channels.Inbound) (string, []Approval) {
	ap := r.opts.Approvals
	if ap == nil {
		return "Nothing is waiting for an approver here.", nil
	}
	session := r.sessionKey(ctx, in.Address())
	done, err := ap.Cancel(ctx, session, in.Identity())
	if err != nil {
		r.log.Error("cancel approvals", "session", session, "err", err)
		return "Could not withdraw the request right now (storage unavailable). Try /cancel again in a minute.", done
	}
	switch len(done) {
	case 0:
		return "Nothing of yours is waiting for an approver here.", nil
	case 1:
		return "Withdrawn: " + commandBlock(done[0].Command) + "\nI'll tell the agent it was cancelled.", done
	}
	return fmt.Sprintf("Withdrew %d requests. I'll tell the agent they were cancelled.", len(done)), done
}
