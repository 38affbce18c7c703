package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2EConfigJobPostsToChat: a job defined in the config file runs on its
// schedule and its reply reaches the target chat.
func TestE2EConfigJobPostsToChat(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := `jobs:
  - name: heartbeat
    schedule: "@every 1s"
    prompt: "SAY: tick from the scheduler"
    target: telegram:4242
`
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, dir, addr, externalEnv(t, tg, llm, addr))
	d.waitReady(ctx)
	msgs, err := waitAnswers(ctx, tg, 4242, 2)
	if err != nil {
		t.Fatalf("job replies: %v", err)
	}
	for _, m := range msgs {
		if m.Visible != "tick from the scheduler" {
			t.Fatalf("job reply = %q", m.Visible)
		}
	}
}

func TestE2EMalformedJobSpecIsAConfigError(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	dir := t.TempDir()
	cfg := `jobs:
  - name: broken
    schedule: "TZ=0"
    prompt: x
    target: telegram:1
`
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, dir, "", nil)
	code, err := d.wait(ctx)
	if err != nil || code != 2 {
		t.Fatalf("exit %d (%v), want 2:\n%s", code, err, d.out.String())
	}
	if out := d.out.String(); !strings.Contains(out, "job broken") || strings.Contains(out, "panic") {
		t.Fatalf("output should name the job and never panic:\n%s", out)
	}
}

// TestE2EAgentCreatesJobWithApproval: the agent's cron tool asks the
// approvers before creating a job; once allowed, the job runs and posts.
func TestE2EAgentCreatesJobWithApproval(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	d := startDaemon(t, t.TempDir(), addr, approvalEnv(t, tg, llm, addr))
	d.waitReady(ctx)
	const dev = 7272
	tg.SendText(dev, dev, "Dev", `CALL_TOOL:cron {"action":"create","name":"tick","schedule":"@every 1s","prompt":"SAY: tock"}`)
	req, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("no approval request for the job: %v", err)
	}
	if !strings.Contains(req[0].Visible, `create job "tick"`) {
		t.Fatalf("approval request = %q", req[0].Visible)
	}
	tg.PressButton(admin, admin, req[0].ID, buttonOn(t, req[0], "Allow once"))
	eventually(ctx, t, "the job's posts in the chat", func() bool {
		n := 0
		for _, m := range tg.Messages(dev) {
			if m.Visible == "tock" {
				n++
			}
		}
		return n >= 2
	})
}
