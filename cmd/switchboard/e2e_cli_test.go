package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// TestE2EChatInTerminal talks to the agent through `switchboard chat`.
func TestE2EChatInTerminal(t *testing.T) {
	llm := llmtest.NewServer()
	defer llm.Close()
	cmd := exec.Command(binPath, "chat")
	cmd.Dir = t.TempDir()
	cmd.Env = append(baseEnv(),
		"SWITCHBOARD_LLM_BASE_URL="+llm.URL(),
		"SWITCHBOARD_DATABASE_URL="+pgtest.New(t),
		"SWITCHBOARD_REDIS_URL="+redistest.URL(t),
		"SWITCHBOARD_REDIS_PREFIX="+redistest.Prefix(t),
	)
	// The second line waits for the first answer: the pipe closes when the
	// reply shows up, ending the session.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &channeltest.Log{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, _ = stdin.Write([]byte("hello terminal\n"))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "echo: hello terminal") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat exited with %v:\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("chat did not exit at end of input:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "echo: hello terminal") {
		t.Fatalf("no answer in the terminal:\n%s", out.String())
	}
}

func TestE2EMigrateAndVersion(t *testing.T) {
	url := pgtest.New(t)
	for i := 0; i < 2; i++ { // twice: the second run has nothing to do
		cmd := exec.Command(binPath, "migrate")
		cmd.Dir = t.TempDir()
		cmd.Env = append(baseEnv(), "SWITCHBOARD_DATABASE_URL="+url)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "up to date") {
			t.Fatalf("migrate run %d: %v\n%s", i+1, err, out)
		}
	}
	out, err := exec.Command(binPath, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "switchboard ") {
		t.Fatalf("version: %v %q", err, out)
	}
	out, err = exec.Command(binPath, "frobnicate").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "unknown command") {
		t.Fatalf("unknown command: exit %d %q", code, out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestE2EHelpAndGlobalConfig: --help on every command prints its usage
// and exits 0; a bad flag exits 2 naming the help; --config may come before
// the command.
func TestE2EHelpAndGlobalConfig(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"serve", "--help"}, {"chat", "-h"}, {"migrate", "--help"},
		{"doctor", "--help"}, {"healthcheck", "--help"}} {
		out, err := exec.Command(binPath, args...).Output()
		if code := exitCode(err); code != 0 || !strings.Contains(string(out), "Usage:") {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
	}
	out, err := exec.Command(binPath, "serve", "--bogus").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "switchboard serve --help") {
		t.Errorf("bad flag: exit %d %q", code, out)
	}
	dir := t.TempDir()
	out, err = exec.Command(binPath, "--config", dir+"/missing.yaml", "migrate").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "missing.yaml") {
		t.Errorf("--config before the command was not used: exit %d %q", code, out)
	}
}

// TestE2EHealthcheck: `switchboard healthcheck` (the container health
// check) exits 0 against a ready daemon and 1, saying why, when nothing
// answers.
func TestE2EHealthcheck(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	e := startTelegramE2E(ctx, t, nil)
	cmd := exec.Command(binPath, "healthcheck")
	cmd.Dir = e.dir
	for k, v := range e.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, baseEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ready" {
		t.Fatalf("healthcheck of a ready daemon: %v %q", err, out)
	}
	out, err := exec.Command(binPath, "healthcheck", "--url", "http://"+freeAddr(t)+"/readyz").CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "does not answer") {
		t.Fatalf("healthcheck with nothing listening: exit %d %q", code, out)
	}
}

// TestE2EDoctorValidatesLikeServe: doctor rejects what serve rejects (a
// malformed job schedule) with exit 2, and names a mistyped variable.
func TestE2EDoctorValidatesLikeServe(t *testing.T) {
	dir := t.TempDir()
	bad := "jobs:\n  - name: x\n    schedule: \"TZ=0\"\n    prompt: p\n    target: telegram:1\n"
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"serve", "doctor"} {
		cmd := exec.Command(binPath, command)
		cmd.Dir = dir
		cmd.Env = baseEnv()
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), `unknown time zone "0"`) {
			t.Errorf("%s with a bad job: exit %d\n%s", command, code, out)
		}
	}
	cmd := exec.Command(binPath, "doctor")
	cmd.Dir = t.TempDir()
	cmd.Env = append(baseEnv(), "SWITCHBOARD_TELEGRAM_TOKNE=x", "SWITCHBOARD_DATABASE_URL=postgres://127.0.0.1:1/x",
		"SWITCHBOARD_REDIS_URL=redis://127.0.0.1:1/0")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "WARN env: SWITCHBOARD_TELEGRAM_TOKNE is not a setting and is ignored; did you mean SWITCHBOARD_TELEGRAM_TOKEN?") {
		t.Errorf("doctor does not name the mistyped variable:\n%s", out)
	}
}
