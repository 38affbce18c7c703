package main

import (
	"testing"
	"time"
)

// TestE2ETelegramWebhookAlbumIsOneRun: in webhook mode, with Telegram
// posting one chat's updates one at a time (each after the previous one
// was answered) to either of two replicas, an album is still one message
// and one run: each part is answered once stored, and a replica hands the
// album over when its parts are quiet.
func TestE2ETelegramWebhookAlbumIsOneRun(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	base := externalEnv(t, tg, llm, "")
	withMediaModels(base)
	base["SWITCHBOARD_TELEGRAM_MODE"] = "webhook"
	base["SWITCHBOARD_TELEGRAM_WEBHOOK_URL"] = e2eHookURL
	base["SWITCHBOARD_TELEGRAM_WEBHOOK_SECRET"] = e2eHookSecret
	rs := startReplicas(ctx, t, base, 2)
	var targets []string
	for _, a := range rs.addrs {
		targets = append(targets, "http://"+a+"/webhooks/telegram")
	}
	tg.DeliverTo(targets...)
	rs.leader(ctx, "leader:telegram:webhook")
	for tg.Webhook() == nil {
		select {
		case <-ctx.Done():
			t.Fatal("no replica registered the webhook")
		case <-time.After(20 * time.Millisecond):
		}
	}
	wantAlbumIsOneRun(ctx, t, tg, llm, 7190)
}
