package redis_test

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"

	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

func TestProbeAnswersForALiveRedis(t *testing.T) {
	if err := sbredis.Probe(testContext(t), redistest.URL(t)); err != nil {
		t.Fatalf("Probe of a live Redis: %v", err)
	}
}

// TestProbeAsksOnce: a server that takes the connection and closes it at
// once gets one connection from Probe, where a Store's Ping would try the
// command again, and the error names the address, not the password.
func TestProbeAsksOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	err = sbredis.Probe(testContext(t), "redis://:probe-secret-7@"+ln.Addr().String()+"/0")
	if err == nil {
		t.Fatal("Probe of a server that hangs up: no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, ln.Addr().String()) || !strings.Contains(msg, "check redis.url") {
		t.Errorf("error %q does not say where and what to check", msg)
	}
	if strings.Contains(msg, "probe-secret-7") {
		t.Errorf("error %q shows the password", msg)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("Probe made %d connections, want 1", n)
	}
}

func TestProbeRefusesABadURL(t *testing.T) {
	err := sbredis.Probe(testContext(t), "http://:probe-secret-8@127.0.0.1:1/0")
	if err == nil || strings.Contains(err.Error(), "probe-secret-8") {
		t.Fatalf("Probe of a non-Redis URL: %v", err)
	}
}
