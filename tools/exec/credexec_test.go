package exec_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/scrub"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// fakeCLI writes an executable that prints its arguments and environment.
func fakeCLI(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\nprintf 'ran %s args=%s\\n' \"$0\" \"$*\"\nprintf 'token length %s\\n' \"${#GH_TOKEN}\"\nenv | sort\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCredentialedExec: the configured binary runs directly with its
// credentials in its environment only; a spoofed binary, shell operators
// and denied arguments are refused; the credential never reaches the
// output.
func TestCredentialedExec(t *testing.T) {
	t.Setenv("SWITCHBOARD_LLM_API_KEY", "daemon-secret")
	const token = "ghp_credential_0123456789abcdef"
	root := t.TempDir()
	ws := workspaceOf(t, root)
	canary := filepath.Join(ws, "pwned")
	spoof := "#!/bin/sh\ntouch " + canary + "\n"
	if err := os.WriteFile(filepath.Join(ws, "gh"), []byte(spoof), 0o755); err != nil {
		t.Fatal(err)
	}
	gh := fakeCLI(t, t.TempDir(), "gh")
	deny, err := exec.CompileDeny("gh", []string{`\bdeploy-key\b`})
	if err != nil {
		t.Fatal(err)
	}
	run := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Mode: exec.ExecModeAllow})
	tool, err := exec.NewCredentialedExec([]exec.CredentialedBinary{{Name: "gh", Path: gh,
		Env: map[string]string{"GH_TOKEN": token}, DenyArgs: deny}}, run)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(tools.RegistryOptions{Scrubber: scrub.New(token)})
	if err := reg.Register(tool); err != nil {
		t.Fatal(err)
	}
	credexec := func(args string) tools.Result {
		return reg.Execute(toolstest.Context(), toolstest.Call, "credentialed_exec", json.RawMessage(args))
	}

	res := credexec(`{"binary": "gh", "args": ["issue", "list", "--label", "bug fix"]}`)
	if res.IsError || !strings.Contains(res.ForLLM, "ran "+gh+" args=issue list --label bug fix") {
		t.Fatalf("gh issue list = %+v", res)
	}
	if strings.Contains(res.ForLLM, token) || !strings.Contains(res.ForLLM, fmt.Sprintf("token length %d", len(token))) {
		t.Fatalf("the credential is in the output, or was not passed:\n%s", res.ForLLM)
	}
	if strings.Contains(res.ForLLM, "daemon-secret") {
		t.Fatalf("the daemon's environment reached the CLI:\n%s", res.ForLLM)
	}

	for args, want := range map[string]string{
		`{"binary": "./gh", "args": ["status"]}`:                    "not a configured binary",
		`{"binary": "` + filepath.Join(ws, "gh") + `", "args": []}`: "not a configured binary",
		`{"binary": "gh2"}`: "not a configured binary",
		`{"binary": "gh", "args": ["issue", "list;", "touch", "x"]}`: `shell operator ";"`,
		`{"binary": "gh", "args": ["pr", "view", "$(touch x)"]}`:     `shell operator "$("`,
		`{"binary": "gh", "args": ["pr", "view", "a|b"]}`:            `shell operator "|"`,
		"{\"binary\": \"gh\", \"args\": [\"x\", \"`id`\"]}":          "shell operator \"`\"",
		`{"binary": "gh", "args": ["a", ">", "/etc/passwd"]}`:        `shell operator ">"`,
		`{"binary": "gh", "args": ["a&&b"]}`:                         `shell operator "&&"`,
		`{"binary": "gh", "args": ["auth", "token"]}`:                "matches the deny rule",
		`{"binary": "gh", "args": ["ssh-key", "add", "k.pub"]}`:      "matches the deny rule",
		`{"binary": "gh", "args": ["repo", "deploy-key", "add"]}`:    "matches the deny rule",
	} {
		if got := credexec(args); !got.IsError || !strings.Contains(got.ForLLM, want) {
			t.Errorf("%s → %+v; want refused with %q", args, got, want)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the workspace's spoofed gh ran")
	}

	if _, err := exec.NewCredentialedExec([]exec.CredentialedBinary{{Name: "gh", Path: "gh"}}, run); err == nil {
		t.Error("a relative path was accepted")
	}
	if _, err := exec.NewCredentialedExec([]exec.CredentialedBinary{{Name: "gh", Path: filepath.Join(t.TempDir(), "nope")}}, run); err == nil {
		t.Error("a missing binary was accepted")
	}
}
