package media_test

import "testing"

// A file-sending call is keyed by its session, id, tool and arguments: the
// same call run again (resumed after a crash) carries the same key, so the
// outbox stores it once; a call id reused for another file, or another
// call, does not.
func TestMediaSendKeyNamesTheCall(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	h.write("a.txt", []byte("first file\n"))
	h.write("b.txt", []byte("second file\n"))
	send := func(callID, path string) string {
		t.Helper()
		h.call.ToolCallID = callID
		before := len(h.queue.rows)
		if res := h.run("send_file", map[string]string{"path": path}); res.IsError {
			t.Fatalf("send_file %s: %s", path, res.ForLLM)
		}
		if len(h.queue.rows) != before+1 {
			t.Fatalf("send_file %s queued %d rows", path, len(h.queue.rows)-before)
		}
		return h.queue.rows[before].Key
	}
	first := send("call_1", "a.txt")
	if first == "" {
		t.Fatal("a call with an id queued a row without a key")
	}
	if again := send("call_1", "a.txt"); again != first {
		t.Errorf("the same call run again has key %q, want %q", again, first)
	}
	if other := send("call_1", "b.txt"); other == first {
		t.Error("a call id reused for another file has the first file's key: it would be silenced")
	}
	if next := send("call_2", "a.txt"); next == first {
		t.Error("another call sending the same file has the first call's key: it would be silenced")
	}
	if none := send("", "a.txt"); none != "" {
		t.Errorf("a call without an id has key %q, want none", none)
	}
}
