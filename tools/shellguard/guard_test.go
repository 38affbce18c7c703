package shellguard_test

import (
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/shellguard"
	"github.com/switchboard-chat/switchboard/tools/shellguard/shellguardtest"
)

func TestCheckCommandBlocksBypasses(t *testing.T) {
	if len(shellguardtest.BypassCases) < 60 {
		t.Fatalf("bypass table has %d cases, want at least 60", len(shellguardtest.BypassCases))
	}
	for _, tc := range shellguardtest.BypassCases {
		v, err := shellguard.CheckCommand(tc.Cmd)
		if tc.Want == shellguardtest.AskHuman {
			if v.Blocked {
				t.Errorf("CheckCommand(%q) blocked as %q (%s), want it left to the approvers", tc.Cmd, v.Category, v.Reason)
			}
			continue
		}
		if !v.Blocked {
			t.Errorf("CheckCommand(%q) not blocked, want %q", tc.Cmd, tc.Want)
			continue
		}
		if v.Category != tc.Want {
			t.Errorf("CheckCommand(%q) category %q (%s), want %q", tc.Cmd, v.Category, v.Reason, tc.Want)
		}
		if err != nil && tc.Want != shellguard.CategoryUnparseable {
			t.Errorf("CheckCommand(%q) err = %v, want an error only for shellguard.CategoryUnparseable commands", tc.Cmd, err)
		}
	}
}

func TestCheckCommandAllowsBenign(t *testing.T) {
	if len(shellguardtest.Benign) < 15 {
		t.Fatalf("benign list has %d commands, want at least 15", len(shellguardtest.Benign))
	}
	for _, cmd := range shellguardtest.Benign {
		v, err := shellguard.CheckCommand(cmd)
		if err != nil || v.Blocked {
			t.Errorf("CheckCommand(%q) = %+v, %v; want not blocked", cmd, v, err)
		}
	}
}

func TestCheckCommandWarnsAboutDangerousCommands(t *testing.T) {
	for _, tc := range shellguardtest.Dangerous {
		v, err := shellguard.CheckCommand(tc.Cmd)
		if err != nil || v.Blocked {
			t.Errorf("CheckCommand(%q) = %+v, %v; want it left to the approvers with a warning", tc.Cmd, v, err)
			continue
		}
		if !v.Dangerous() || !strings.Contains(strings.Join(v.Warnings, "; "), tc.Warning) {
			t.Errorf("CheckCommand(%q) warnings %q, want one mentioning %q", tc.Cmd, v.Warnings, tc.Warning)
		}
	}
	for _, cmd := range shellguardtest.Benign {
		if v, _ := shellguard.CheckCommand(cmd); v.Dangerous() {
			t.Errorf("everyday command %q flagged as dangerous: %q", cmd, v.Warnings)
		}
	}
}

func TestCheckCommandRejectsUnusableText(t *testing.T) {
	for _, cmd := range []string{"", "   ", "echo a\x00b", "echo " + strings.Repeat("a", 70<<10)} {
		v, err := shellguard.CheckCommand(cmd)
		if !v.Blocked || v.Category != shellguard.CategoryUnparseable || err == nil {
			t.Errorf("CheckCommand(%.20q) = %+v, %v; want blocked as shellguard.CategoryUnparseable with an error", cmd, v, err)
		}
	}
}

func TestCheckCommandBoundsNesting(t *testing.T) {
	v, _ := shellguard.CheckCommand(strings.Repeat("eval ", 12) + "true")
	if !v.Blocked || v.Category != shellguard.CategoryEvalInjection {
		t.Errorf("12 nested evals: %+v, want blocked as too deeply nested", v)
	}
	v, _ = shellguard.CheckCommand(strings.Repeat("eval ", 3) + "true")
	if v.Blocked {
		t.Errorf("3 nested evals blocked: %+v", v)
	}
}

func TestCheckCommandReasonHasNoArguments(t *testing.T) {
	v, _ := shellguard.CheckCommand("cat /proc/self/environ SECRETVALUE123")
	if !v.Blocked || strings.Contains(v.Reason, "SECRETVALUE123") || strings.Contains(v.Reason, "/proc") {
		t.Errorf("verdict %+v: want blocked with a reason that does not echo arguments", v)
	}
}
