package redis_test

import (
	"context"
	"testing"
	"time"

	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// backend opens a Store on one kind of Redis.
type backend struct {
	name string
	open func(t *testing.T) *sbredis.Store
}

// backends lists the real Redis and the in-process one: every behaviour
// must hold on both.
var backends = []backend{
	{name: "real", open: openReal},
	{name: "embedded", open: openEmbedded},
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openReal(t *testing.T) *sbredis.Store {
	t.Helper()
	url := redistest.URL(t)
	return openStore(t, url, redistest.Prefix(t))
}

func openEmbedded(t *testing.T) *sbredis.Store {
	t.Helper()
	e, err := sbredis.StartEmbedded(nil)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(e.Close)
	return openStore(t, e.URL(), "")
}

func openStore(t *testing.T, url, prefix string) *sbredis.Store {
	t.Helper()
	s, err := sbredis.Open(testContext(t), url, sbredis.Options{Prefix: prefix})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
