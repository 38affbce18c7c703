package redis_test

import (
	"testing"
	"time"
)

func TestWakeReachesSubscriberOnly(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			s := be.open(t)
			ctx := testContext(t)
			ch, stop, err := s.Subscribe(ctx, "approval:1")
			if err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			defer stop()
			other, stopOther, err := s.Subscribe(ctx, "approval:2")
			if err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			defer stopOther()
			if err := s.Wake(ctx, "approval:1"); err != nil {
				t.Fatalf("wake: %v", err)
			}
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatal("subscriber was not woken")
			}
			select {
			case <-other:
				t.Fatal("a wake for approval:1 woke approval:2")
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}
