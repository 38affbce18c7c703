package embedded

import (
	"testing"
)

func TestParsePostmasterPid(t *testing.T) {
	p, err := parsePostmasterPid([]byte("4242\n/data/postgres\n1700000000\n5433\n/run/sock\n127.0.0.1\n  1 2\nready   \n"))
	if err != nil || p.pid != 4242 || p.port != 5433 {
		t.Errorf("parse = %+v, %v; want pid 4242 port 5433", p, err)
	}
	for _, bad := range []string{"", "garbage\n", "-1\n", "0\n"} {
		if _, err := parsePostmasterPid([]byte(bad)); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}
