package slack_test

import (
	"errors"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestDelete(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := channels.Address{Platform: "slack", ChatID: "C0GEN", ThreadID: "1700000030.000100"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "⏳ working…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Delete(ctx, to, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if del := h.fake.Posted("C0GEN", "chat.delete"); len(del) != 1 || del[0].TS != id {
		t.Errorf("chat.delete calls = %+v, want one for %s", del, id)
	}
	if err := h.ch.Delete(ctx, to, id); err != nil {
		t.Errorf("second Delete of the same message: %v, want nil (already gone)", err)
	}
	if err := h.ch.Delete(ctx, to, ""); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Delete without a ts: %v, want ErrPermanent", err)
	}
}
