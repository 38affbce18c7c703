package bot

import (
	"testing"
	"time"
)

// waitUntil polls cond until it holds, failing the test after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitUntil is waitUntil for the external test package.
var WaitUntil = waitUntil
