package postgres

import (
	"testing"
)

func TestStorableAndTruncate(t *testing.T) {
	if got := storable("ok ✓"); got != "ok ✓" {
		t.Errorf("storable changed valid text: %q", got)
	}
	if got := storable("a\x00b\xffc"); got != "a\uFFFDb\uFFFDc" {
		t.Errorf("storable = %q", got)
	}
	if got := truncate("héllo", 2); got != "h" {
		t.Errorf("truncate split a rune: %q", got)
	}
	if got := truncate("abc", 10); got != "abc" {
		t.Errorf("truncate = %q", got)
	}
}
