package bot

import (
	"fmt"
	"testing"
)

// A reply's key tells it from a later row that got its id after a
// PostgreSQL crash lost the reply; every attempt at one row has one key,
// and it fits Discord's 25-character nonce with the part number.
func TestOutboxKeyTellsRowsWithOneIDApart(t *testing.T) {
	reply := OutboxRow{ID: 41, Session: "default/telegram:42", SourceSeq: 7}
	if a, b := outboxKey(reply), outboxKey(reply); a != b {
		t.Errorf("one row, two keys: %q, %q", a, b)
	}
	if got := outboxKey(OutboxRow{ID: 41}); got != "sb41" {
		t.Errorf("a notice's key = %q, want sb41", got)
	}
	seen := map[string]OutboxRow{}
	for _, r := range []OutboxRow{
		reply,
		{ID: 41},
		{ID: 41, Session: reply.Session, SourceSeq: 8},
		{ID: 41, Session: "default/telegram:43", SourceSeq: 7},
		{ID: 42, Session: reply.Session, SourceSeq: 7},
	} {
		k := outboxKey(r)
		if other, dup := seen[k]; dup {
			t.Errorf("rows %+v and %+v share the key %q", other, r, k)
		}
		seen[k] = r
	}
	long := OutboxRow{ID: 999_999_999_999, Session: "an-agent/discord:123456789012345678/thread", SourceSeq: 1 << 40}
	if n := fmt.Sprintf("%s.%d", outboxKey(long), 9); len(n) > 25 {
		t.Errorf("nonce %q is %d characters, more than Discord's 25", n, len(n))
	}
}
