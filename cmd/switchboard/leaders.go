package main

import (
	"context"
	"os"
	"slices"

	"github.com/switchboard-chat/switchboard/bot/leader"
)

// leaderTask is work one replica at a time does besides receiving on a
// channel: registering Telegram's webhook.
type leaderTask struct {
	leader *leader.Leader
	run    func(context.Context) error
}

// holdAfter returns a leader task that does once and then keeps
// leadership until it is lost or the daemon stops, so the work is not
// repeated by every replica in turn.
func holdAfter(once func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := once(ctx); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}
}

// leaderships returns the leader keys this replica holds now, sorted.
func (d *daemon) leaderships() []string {
	held := []string{}
	for _, l := range d.leaders {
		if l.Held() {
			held = append(held, l.Key)
		}
	}
	for _, t := range d.leaderTasks {
		if t.leader.Held() {
			held = append(held, t.leader.Key)
		}
	}
	slices.Sort(held)
	return held
}

// replicaName is the configured replica name, else the host name (a
// Kubernetes pod's name), else "switchboard".
func replicaName(configured string) string {
	if configured != "" {
		return configured
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "switchboard"
}
