package bot

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboard-chat/switchboard/channels"
)

// Access modes (config access.mode).
const (
	AccessModeOpen      = "open"
	AccessModeAllowlist = "allowlist"
	AccessModeRequest   = "request"
)

// AccessOptions says who may talk to agents.
type AccessOptions struct {
	Mode   string   // open, allowlist or request
	Admins []string // platform:user_id; always allowed
	Allow  []string // platform:user_id allowed from the start
}

func (o AccessOptions) listed(id string) bool {
	return slices.Contains(o.Admins, id) || slices.Contains(o.Allow, id)
}

// IsAdmin reports whether identity is a configured admin.
func (o AccessOptions) IsAdmin(identity string) bool { return slices.Contains(o.Admins, identity) }

// allowed decides whether in's sender may talk to agents. Deny by default:
// only open mode lets unknown people in.
func (r *Router) allowed(ctx context.Context, in channels.Inbound) (bool, error) {
	a := r.opts.Access
	if a.Mode == AccessModeOpen {
		return true, nil
	}
	id := in.Identity()
	if a.listed(id) {
		return true, nil
	}
	if r.opts.Identities == nil {
		return false, nil
	}
	ok, err := r.opts.Identities.IsAllowed(ctx, id)
	if err != nil {
		return false, fmt.Errorf("identity lookup: %w", err)
	}
	return ok, nil
}

// HandleUnknown sets what request mode does with a message from someone
// not allowed (the access feature files a request with the admins). Call
// it after NewRouter and before the first Handle.
func (r *Router) HandleUnknown(h func(ctx context.Context, in channels.Inbound)) { r.unknown = h }

// refuse handles a message from someone not allowed: in request mode the
// unknown-person handler takes it (HandleUnknown); otherwise they are told
// how to get access, at most twice a day, so a stranger cannot make the bot
// spam a group.
func (r *Router) refuse(ctx context.Context, in channels.Inbound) {
	id := in.Identity()
	r.log.Info("access refused", "user", id, "mode", r.opts.Access.Mode)
	if r.opts.Access.Mode == AccessModeRequest && r.unknown != nil {
		r.unknown(ctx, in)
		return
	}
	r.NoticeOnce(ctx, in, "notice:access:"+id,
		fmt.Sprintf("Sorry, you don't have access to this bot. Ask an admin to allow `%s`.", id))
}
