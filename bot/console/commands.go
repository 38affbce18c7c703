package console

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Commands returns /login and /logout, to register with the Router.
func (c *Console) Commands() []bot.Command {
	return []bot.Command{
		{Name: "login", Help: "admins, in a direct message: a one-time link to the admin console (valid 10 minutes)", Run: c.cmdLogin},
		{Name: "logout", Help: "admins: end every admin console session of yours", Run: c.cmdLogout},
	}
}

// cmdLogin answers /login with a one-time link, only to an admin and only
// in a direct message: in a group others would see it.
func (c *Console) cmdLogin(ctx context.Context, host bot.Host, in channels.Inbound, _ string) string {
	who := in.Identity()
	switch {
	case !host.IsAdmin(who):
		c.log.Warn("/login by a non-admin", "identity", who)
		return "Only admins can log in to the admin console; ask an admin if you need something from it."
	case !in.Direct:
		return "Send /login to me in a direct message: a login link must not be seen by anyone else. No link was made."
	case c.o.PublicURL == "":
		return "The admin console needs the address people reach this server at: set http.public_url " +
			"(SWITCHBOARD_HTTP_PUBLIC_URL, e.g. https://bot.example.com) and restart, then send /login again."
	}
	tok := randomToken()
	dctx, cancel := durable(ctx)
	defer cancel()
	if err := c.o.Store.CreateLoginLink(dctx, hashToken(tok), who, LinkTTL); err != nil {
		c.log.Error("/login: store the link", "err", err) // never the link itself
		return "Could not make a login link right now (storage unavailable); send /login again in a moment."
	}
	c.log.Info("console login link made", "identity", who)
	return fmt.Sprintf("Your admin console link, valid %d minutes and usable once — do not share it:\n%s/admin/login?t=%s\n"+
		"Send /logout to end every console session of yours.", int(LinkTTL.Minutes()), c.o.PublicURL, tok)
}

// cmdLogout answers /logout: every console session of the sender ends.
func (c *Console) cmdLogout(ctx context.Context, host bot.Host, in channels.Inbound, _ string) string {
	who := in.Identity()
	if !host.IsAdmin(who) {
		return "Only admins have admin console sessions."
	}
	dctx, cancel := durable(ctx)
	defer cancel()
	n, err := c.o.Store.EndSessions(dctx, who, who)
	if err != nil {
		c.log.Error("/logout: end sessions", "err", err)
		return "Could not end your console sessions right now (storage unavailable); send /logout again in a moment."
	}
	c.log.Info("console sessions ended", "identity", who, "sessions", n)
	return fmt.Sprintf("Ended %d admin console session(s) of yours; every browser that had one must log in again.", n)
}
