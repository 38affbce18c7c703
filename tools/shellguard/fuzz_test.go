package shellguard_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/tools/shellguard"
	"github.com/switchboard-chat/switchboard/tools/shellguard/shellguardtest"
)

// addSeeds adds the test tables to a fuzz corpus (on top of the checked-in
// testdata/fuzz corpus).
func addSeeds(f *testing.F) {
	for _, tc := range shellguardtest.BypassCases {
		f.Add(tc.Cmd)
	}
	for _, cmd := range shellguardtest.Benign {
		f.Add(cmd)
	}
}

// FuzzCheckCommand: the guard never panics; a blocked command stays
// blocked once normalized (so "Always allow" patterns cannot launder it);
// normalization is stable.
func FuzzCheckCommand(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		v, err := shellguard.CheckCommand(cmd)
		if err != nil && (!v.Blocked || v.Category != shellguard.CategoryUnparseable) {
			t.Fatalf("CheckCommand(%q) error %v with verdict %+v", cmd, err, v)
		}
		if v.Blocked && v.Category == "" {
			t.Fatalf("CheckCommand(%q) blocked without a category", cmd)
		}
		n, nerr := shellguard.NormalizeCommand(cmd)
		if nerr != nil {
			if !v.Blocked {
				t.Fatalf("NormalizeCommand(%q) failed (%v) for a command CheckCommand passed", cmd, nerr)
			}
			return
		}
		nv, _ := shellguard.CheckCommand(n)
		if v.Blocked && !nv.Blocked {
			t.Fatalf("CheckCommand(%q) blocked (%s: %s) but its normal form %q passes", cmd, v.Category, v.Reason, n)
		}
		if !v.Blocked {
			again, err := shellguard.NormalizeCommand(n)
			if err != nil || again != n {
				t.Fatalf("NormalizeCommand unstable for %q: %q then %q (%v)", cmd, n, again, err)
			}
		}
	})
}

// FuzzNormalizeCommand: normalization never panics, its output parses, and
// it is idempotent.
func FuzzNormalizeCommand(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		n, err := shellguard.NormalizeCommand(cmd)
		if err != nil {
			return
		}
		again, err := shellguard.NormalizeCommand(n)
		if err != nil {
			t.Fatalf("normal form %q of %q does not parse: %v", n, cmd, err)
		}
		if again != n {
			t.Fatalf("NormalizeCommand not idempotent for %q: %q then %q", cmd, n, again)
		}
	})
}
