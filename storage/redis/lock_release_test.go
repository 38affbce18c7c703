package redis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// A lock given back with ReleaseSoon is free again for this process's next
// Obtain (the release travels with it) and, without one, for another
// replica within moments.
func TestLockReleaseSoon(t *testing.T) {
	ctx := testContext(t)
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	a, b := openStore(t, url, prefix), openStore(t, url, prefix)

	l, err := a.Obtain(ctx, "session:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	l.(bot.SoonReleaser).ReleaseSoon()
	// The same key at once: the queued release goes first in the same call.
	again, err := a.Obtain(ctx, "session:1", time.Minute)
	if err != nil {
		t.Fatalf("Obtain right after ReleaseSoon: %v", err)
	}
	if _, err := b.Obtain(ctx, "session:1", time.Minute); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("another replica's Obtain of a held lock: err = %v, want ErrLocked", err)
	}
	// Alone, the release is sent after a few milliseconds.
	again.(bot.SoonReleaser).ReleaseSoon()
	deadline := time.Now().Add(5 * time.Second)
	for {
		other, err := b.Obtain(ctx, "session:1", time.Minute)
		if err == nil {
			if err := other.Release(ctx); err != nil {
				t.Fatal(err)
			}
			break
		}
		if !errors.Is(err, bot.ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("the lock was not released: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A release queued for a lock someone else holds by now changes nothing.
	mine, err := a.Obtain(ctx, "session:2", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // expired
	theirs, err := b.Obtain(ctx, "session:2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	mine.(bot.SoonReleaser).ReleaseSoon()
	if _, err := a.Obtain(ctx, "session:3", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := theirs.Release(ctx); err != nil {
		t.Errorf("the other holder's lock was released by a stale ReleaseSoon: %v", err)
	}
}

// A flush that has taken a released lock but not reached Redis yet does
// not make this process's next Obtain of that key wait: the Obtain repeats
// the release.
func TestObtainRepeatsAReleaseBeingSent(t *testing.T) {
	ctx := testContext(t)
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	a, b := openStore(t, url, prefix), openStore(t, url, prefix)

	l, err := a.Obtain(ctx, "session:9", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	l.(bot.SoonReleaser).ReleaseSoon()
	send := a.StartFlushForTest() // the timer's flush took it; its script has not run
	again, err := a.Obtain(ctx, "session:9", time.Minute)
	if err != nil {
		t.Fatalf("Obtain while the release is being sent: %v, want the lock", err)
	}
	send() // the flush's release arrives late: it must not free the new lock
	if _, err := b.Obtain(ctx, "session:9", time.Minute); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("another replica's Obtain after the late release: err = %v, want ErrLocked", err)
	}
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
