package main

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// leaderTask is work one replica at a time does besides receiving on a
// channel: registering Telegram's webhook.
type leaderTask struct {
	leader *bot.Leader
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

// leadershipSought is closed once every leader of this replica has sought
// leadership for the first time, or after limit, or when ctx ends.
func (d *daemon) leadershipSought(ctx context.Context, limit time.Duration) <-chan struct{} {
	all := make([]*bot.Leader, 0, len(d.leaders)+len(d.leaderTasks))
	for _, l := range d.leaders {
		all = append(all, l)
	}
	for _, t := range d.leaderTasks {
		all = append(all, t.leader)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		timer := time.NewTimer(limit)
		defer timer.Stop()
		for _, l := range all {
			select {
			case <-l.Asked():
			case <-timer.C:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return done
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
