package shellguard_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/tools/shellguard"
	"github.com/switchboard-chat/switchboard/tools/shellguard/shellguardtest"
)

func mustNormalize(t *testing.T, cmd string) string {
	t.Helper()
	n, err := shellguard.NormalizeCommand(cmd)
	if err != nil {
		t.Fatalf("NormalizeCommand(%q): %v", cmd, err)
	}
	return n
}

func TestNormalizeCommandSameMeaning(t *testing.T) {
	for _, group := range [][]string{
		{"echo a", "echo   a", "echo 'a'", `echo "a"`, `echo \a`, "  echo a  ", "echo a # comment", "echo a;"},
		{"ls -la src", "ls '-la' \"src\"", "ls -l''a src"},
		{"echo 'a b'", `echo "a b"`, `echo a\ b`},
		{"git status && go test ./...", "git status   &&   go test ./..."},
		{"FOO=bar make", "FOO='bar' make"},
		{"cat <<'EOF'\nx $y\nEOF", "cat  <<'EOF'\nx $y\nEOF"},
	} {
		want := mustNormalize(t, group[0])
		for _, cmd := range group[1:] {
			if got := mustNormalize(t, cmd); got != want {
				t.Errorf("NormalizeCommand(%q) = %q, want %q like %q", cmd, got, want, group[0])
			}
		}
	}
}

func TestNormalizeCommandDifferentMeaning(t *testing.T) {
	base := mustNormalize(t, "echo a")
	for _, cmd := range []string{
		"echo a; id", "echo a && id", "echo a || id", "echo b", "echo a | sh", "echo a $(id)", "echo a `id`",
		"echo a > f", "echo a &", "echo a b", "echo 'a b'", "echo $a", `echo "$a"`, "echo a*", "echo {a,b}",
		"echo ~", "(echo a)", "{ echo a; }", "echo a\nid", "! echo a", "x=1 echo a", "echo a 2>&1",
	} {
		if got := mustNormalize(t, cmd); got == base {
			t.Errorf("NormalizeCommand(%q) = %q, the same as for \"echo a\"", cmd, got)
		}
	}
	// Quoting that changes meaning must survive normalization.
	pairs := [][2]string{{"echo *", "echo '*'"}, {"echo ~", "echo '~'"}, {"echo $HOME", "echo '$HOME'"}, {"echo {a,b}", "echo '{a,b}'"}}
	for _, p := range pairs {
		if mustNormalize(t, p[0]) == mustNormalize(t, p[1]) {
			t.Errorf("%q and %q normalize the same", p[0], p[1])
		}
	}
}

func TestNormalizeCommandIsStable(t *testing.T) {
	for _, tc := range append(shellguardtest.Benign, "echo 'it''s'", "echo $'\\x01'", "printf '%s\\n' \"a'b\"") {
		n := mustNormalize(t, tc)
		if again := mustNormalize(t, n); again != n {
			t.Errorf("NormalizeCommand not stable for %q: %q then %q", tc, n, again)
		}
	}
}

func TestNormalizeCommandRejectsUnparseable(t *testing.T) {
	for _, cmd := range []string{"echo 'x", "if then", "", "a\x00b"} {
		if _, err := shellguard.NormalizeCommand(cmd); err == nil {
			t.Errorf("NormalizeCommand(%q) accepted", cmd)
		}
	}
}
