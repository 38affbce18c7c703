package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/config"
)

// TestPolicyListsNameCustomAndPlannedTools: tools.allow/deny and an agent's
// lists may name a configured custom tool and the tools not built yet; a
// typo of the custom tool's name is refused with the name it was meant to be.
func TestPolicyListsNameCustomAndPlannedTools(t *testing.T) {
	load := func(allow string) *config.Config {
		t.Helper()
		file := filepath.Join(t.TempDir(), "switchboard.yaml")
		body := "custom_tools:\n  - name: dns_lookup\n    command: dig {{.host}}\n" +
			"tools:\n  allow: [" + allow + "]\n  deny: [dns_lookup, tts]\n" +
			"agents:\n  - name: ops\n    tools: {allow: [dns_lookup, read_document]}\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(config.LoadOptions{File: file, Environ: []string{}})
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		return cfg
	}
	if problems := policyProblems(load("dns_lookup, read_image, group:media, exec")); len(problems) != 0 {
		t.Errorf("custom and planned tools refused:\n%s", strings.Join(problems, "\n"))
	}
	problems := strings.Join(policyProblems(load("dns_lokup")), "\n")
	if want := `tools.allow: unknown tool "dns_lokup"; did you mean "dns_lookup"?`; !strings.Contains(problems, want) {
		t.Errorf("problems lack %q:\n%s", want, problems)
	}
}
