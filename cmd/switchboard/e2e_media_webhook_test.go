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
	withTelegramWebhook(base)
	rs := startReplicas(ctx, t, base, 2)
	deliverToReplicas(tg, rs)
	rs.leader(ctx, "leader:telegram:webhook")
	waitWebhook(ctx, t, tg)
	wantAlbumIsOneRun(ctx, t, tg, llm, 7190)
}
