package bot

import (
	"context"
	"fmt"

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
	for _, l := range [][]string{o.Admins, o.Allow} {
		for _, a := range l {
			if a == id {
				return true
			}
		}
	}
	return false
}

// IsAdmin reports whether identity is a configured admin.
func (o AccessOptions) IsAdmin(identity string) bool {
	for _, a := range o.Admins {
		if a == identity {
			return true
		}
	}
	return false
}

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

// refuse tells an unknown sender how to get access, once per day at most,
// so a stranger cannot make the bot spam a group.
func (r *Router) refuse(ctx context.Context, in channels.Inbound) {
	id := in.Identity()
	r.log.Info("access refused", "user", id, "mode", r.opts.Access.Mode)
	if r.opts.Notice != nil {
		first, err := r.opts.Notice.FirstSeen(ctx, "notice:access:"+id, DedupeTTL/2)
		if err == nil && !first {
			return
		}
	}
	r.notify(ctx, in, fmt.Sprintf("Sorry, you don't have access to this bot yet. Ask an admin to allow `%s`.", id))
}
