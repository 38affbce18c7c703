package main

import (
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// TestE2EApprovalPressedOnAnotherReplica: in webhook mode an exec approval
// is requested through replica A (the message was posted to A) and the
// admin's press is posted to replica B; the parked run resumes and
// completes, and the chat gets the command's output once.
func TestE2EApprovalPressedOnAnotherReplica(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	base := externalEnv(t, tg, llm, "")
	base["SWITCHBOARD_ADMINS"] = "telegram:500"
	withTelegramWebhook(base)
	rs := startReplicas(ctx, t, base, 2)
	hook := func(i int) string { return "http://" + rs.addrs[i] + "/webhooks/telegram" }
	rs.leader(ctx, "leader:telegram:webhook")
	eventually(ctx, t, "the webhook registered", func() bool { return tg.Webhook() != nil })

	const dev = 700
	tg.DeliverTo(hook(0)) // the request goes through replica 0
	mark := lastID(tg, dev)
	tg.SendText(dev, dev, "Dev", `please CALL_TOOL:exec {"command":"echo pressed-elsewhere"}`)
	req, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("no approval request: %v", err)
	}
	if !strings.Contains(req[0].Visible, "echo pressed-elsewhere") {
		t.Fatalf("approval request %q", req[0].Visible)
	}
	tg.DeliverTo(hook(1)) // the press goes through replica 1
	tg.PressButton(admin, admin, req[0].ID, buttonOn(t, req[0], "Allow once"))
	if a := lastAnswerText(ctx, t, tg, 1); !strings.HasPrefix(a, "Done") {
		t.Fatalf("press answered %q", a)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "pressed-elsewhere")
	time.Sleep(500 * time.Millisecond) // a second delivery would come now
	n := 0
	for _, m := range tg.Messages(dev) {
		if strings.Contains(m.Visible, "tool exec said") && strings.Contains(m.Visible, "pressed-elsewhere") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the command's output reached the chat %d times, want 1", n)
	}
}

// TestE2EDoctorExplainsWebhook: doctor says when Telegram posts to another
// URL than telegram.webhook_url, and when its last delivery failed.
func TestE2EDoctorExplainsWebhook(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	tg, llm := fakes(t)
	env := externalEnv(t, tg, llm, "")
	withTelegramWebhook(env)
	doctor := func() string {
		t.Helper()
		d := startDaemon(t, t.TempDir(), "", env, "doctor")
		if _, err := d.wait(ctx); err != nil {
			t.Fatal("doctor did not finish")
		}
		return d.out.String()
	}
	if out := doctor(); !strings.Contains(out, "not registered yet") {
		t.Errorf("doctor before any registration:\n%s", out)
	}
	// Someone else's webhook is set.
	setWebhook(t, tg, "https://elsewhere.example/hook")
	if out := doctor(); !strings.Contains(out, "FAIL telegram") || !strings.Contains(out, "elsewhere.example") {
		t.Errorf("doctor with a foreign webhook:\n%s", out)
	}
	// The right one, but deliveries fail.
	setWebhook(t, tg, e2eHookURL)
	tg.DeliverTo("http://" + freeAddr(t) + "/webhooks/telegram") // nothing listens
	tg.SendText(1, 1, "Ann", "hello")
	eventually(ctx, t, "a failed delivery", func() bool { _, f := tg.WebhookStats(); return f > 0 })
	out := doctor()
	if !strings.Contains(out, "FAIL telegram") || !strings.Contains(out, "last delivery") || !strings.Contains(out, "Connection refused") {
		t.Errorf("doctor with failing deliveries:\n%s", out)
	}
	if strings.Contains(out, e2eHookSecret) {
		t.Errorf("doctor printed the webhook secret:\n%s", out)
	}
}

// setWebhook registers url with the fake as a bot would.
func setWebhook(t *testing.T, tg *telegramtest.Server, url string) {
	t.Helper()
	resp, err := http.PostForm(tg.URL()+"/bot"+testToken+"/setWebhook", neturl.Values{"url": {url}, "secret_token": {e2eHookSecret}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setWebhook: HTTP %d", resp.StatusCode)
	}
}
