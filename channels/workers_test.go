package channels

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// A goroutine whose function returned waits for the next one: a hand-over
// reaches it without a new goroutine, and Stop lets it go.
func TestWorkersReuseAWaitingGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := NewWorkers(time.Minute)
	done := make(chan struct{})
	w.Go(func() { close(done) })
	<-done
	again := make(chan struct{})
	select {
	case w.work <- func() { close(again) }: // taken only by a waiting goroutine
	case <-time.After(10 * time.Second):
		t.Fatal("no goroutine waited for more work after its function returned")
	}
	<-again
	w.Stop()
}

// Go never waits for a free goroutine: functions that block one another
// all run at once.
func TestWorkersGoNeverBlocks(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := NewWorkers(time.Minute)
	defer w.Stop()
	const n = 5
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	for range n {
		w.Go(func() { started.Done(); release.Wait() })
	}
	started.Wait() // all n run together
	release.Done()
}

// An idle goroutine exits once the idle time passes with no work, and Go
// after Stop still runs functions.
func TestWorkersExitWhenIdleAndAfterStop(t *testing.T) {
	w := NewWorkers(20 * time.Millisecond)
	done := make(chan struct{})
	w.Go(func() { close(done) })
	<-done
	goleak.VerifyNone(t) // retries for a while: the goroutine is gone after 20 ms
	w.Stop()
	ran := make(chan struct{})
	w.Go(func() { close(ran) })
	<-ran
	goleak.VerifyNone(t)
}
