package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// checks are the readiness checks: storage, migrations and every channel.
func (d *daemon) checks() map[string]bot.Check {
	c := map[string]bot.Check{
		"postgres": d.st.db.Ping,
		"redis":    d.st.rdb.Ping,
		"migrations": func(context.Context) error {
			if !d.migrated.Load() {
				return errors.New("not applied yet (waiting for PostgreSQL)")
			}
			return nil
		},
	}
	for name, ch := range d.channels {
		if rc, ok := ch.(channels.ReadyChecker); ok {
			c[name] = rc.Ready
			if l := d.leaders[name]; l != nil {
				// A standby replica sends but does not receive: ready while
				// another replica leads. Before anyone leads, not ready.
				c[name] = func(ctx context.Context) error {
					switch {
					case l.Held():
						return rc.Ready(ctx)
					case l.Standby():
						return nil
					}
					return fmt.Errorf("no replica receives yet (%s not held)", l.Key)
				}
			}
		}
	}
	return c
}

// startupChecks say whether start-up is over: every readiness check but the
// PostgreSQL and Redis pings — the applied schema shows PostgreSQL
// answered, and waiting then costs no round trips (nor an extra pool
// connection while the channels connect).
func (d *daemon) startupChecks() []bot.Check {
	var out []bot.Check
	for name, check := range d.checks() {
		if name != "postgres" && name != "redis" {
			out = append(out, check)
		}
	}
	return out
}

// allPass reports whether every check passes now.
func allPass(ctx context.Context, checks []bot.Check) bool {
	for _, check := range checks {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err := check(cctx)
		cancel()
		if err != nil {
			return false
		}
	}
	return true
}
