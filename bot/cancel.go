package bot

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// cmdCancel withdraws the sender's pending approval requests in this chat's
// session (an approver may withdraw anyone's). The parked run resumes and
// the model is told the user cancelled; the approvers' buttons are removed.
func (r *Router) cmdCancel(ctx context.Context, in channels.Inbound, _ string) string {
	ap := r.opts.Approvals
	if ap == nil {
		return "Nothing is waiting for an approver here."
	}
	session := agentcore.SessionKey{Agent: r.opts.AgentName, Scope: in.Address().String()}.String()
	done, err := ap.Cancel(ctx, session, in.Identity())
	if err != nil {
		r.log.Error("cancel approvals", "session", session, "err", err)
		return "Could not withdraw the request right now (storage unavailable). Try /cancel again in a minute."
	}
	switch len(done) {
	case 0:
		return "Nothing of yours is waiting for an approver here."
	case 1:
		return "Withdrawn: " + commandBlock(done[0].Command) + "\nI'll tell the agent it was cancelled."
	}
	return fmt.Sprintf("Withdrew %d requests. I'll tell the agent they were cancelled.", len(done))
}
