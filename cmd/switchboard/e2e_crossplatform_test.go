package main

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// TestE2ECrossPlatformApproval: a Telegram user's command is approved by a
// Slack user in the Slack channel set as approvals.chat.
func TestE2ECrossPlatformApproval(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg := telegramtest.NewServer(testToken)
	defer tg.Close()
	sl := slacktest.NewServer(slackBot, slackApp)
	defer sl.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	withSlack(env, sl)
	env["SWITCHBOARD_APPROVALS_APPROVERS"] = "slack:U0000OPS"
	env["SWITCHBOARD_APPROVALS_CHAT"] = "slack:C0000APPROVALS"
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)

	tg.SendText(901, 901, "Dev", `CALL_TOOL:exec {"command":"echo across-platforms"}`)
	eventually(ctx, t, "the approval request in the Slack channel", func() bool { return len(posted(sl, "C0000APPROVALS")) >= 1 })
	req := posted(sl, "C0000APPROVALS")[0]
	if !strings.Contains(req.Section+req.Text, "echo across-platforms") || !strings.Contains(req.Section+req.Text, "telegram:901") {
		t.Fatalf("approval request = %+v", req)
	}
	if _, err := sl.SendInteraction(slacktest.Press{Channel: "C0000APPROVALS", User: "U0000OPS", MessageTS: req.TS,
		Value: slackButton(t, req, "Allow once"), ActionID: "x1"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the output in the Telegram chat", func() bool {
		for _, m := range tg.Messages(901) {
			if strings.Contains(m.Visible, "tool exec said: across-platforms") {
				return true
			}
		}
		return false
	})
}
