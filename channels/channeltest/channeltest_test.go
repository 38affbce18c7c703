package channeltest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// oneEvent delivers one event, then reports ready until stopped.
type oneEvent struct {
	ready   atomic.Bool
	stopped atomic.Bool
}

func (c *oneEvent) Start(ctx context.Context, h channels.Handler) error {
	if err := h(ctx, channels.Inbound{Text: "hello"}); err != nil {
		return err
	}
	c.ready.Store(true)
	<-ctx.Done()
	c.ready.Store(false)
	c.stopped.Store(true)
	return nil
}

func (c *oneEvent) Ready(context.Context) error {
	if !c.ready.Load() {
		return context.Canceled
	}
	return nil
}

func TestRunnerDeliversWaitsAndStops(t *testing.T) {
	ch := &oneEvent{}
	log := &channeltest.Log{}
	r := channeltest.NewRunner(t, ch, log)
	r.Start(nil)
	if in := r.Next(); in.Text != "hello" {
		t.Fatalf("Next = %+v, want the event Start delivered", in)
	}
	r.WaitReady()
	r.Stop()
	if !ch.stopped.Load() {
		t.Error("Stop returned before Start did")
	}
	r.WaitState(false)
	log.Logger().Info("one line", "k", "v")
	log.Logger().Info("two")
	if n := channeltest.CountLines(log.String(), "msg="); n != 2 {
		t.Errorf("CountLines = %d over %q, want 2", n, log.String())
	}
}
