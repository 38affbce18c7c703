package telegram_test

import (
	"errors"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestDelete(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := channels.Address{Platform: "telegram", ChatID: "91"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "⏳ working…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Delete(ctx, to, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if msgs := h.fake.Messages(91); len(msgs) != 0 {
		t.Errorf("messages after delete: %+v", msgs)
	}
	if del := h.fake.Deleted(91); len(del) != 1 || del[0].Visible != "⏳ working…" {
		t.Errorf("deleted = %+v, want the note", del)
	}
	if err := h.ch.Delete(ctx, to, id); err != nil {
		t.Errorf("second Delete of the same message: %v, want nil (already gone)", err)
	}
	if err := h.ch.Delete(ctx, to, "not-a-number"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Delete with a bad id: %v, want ErrPermanent", err)
	}
	h.fake.Fail("deleteMessage", 429, 3, 1)
	id, err = h.ch.Send(ctx, channels.Outbound{To: to, Text: "again"})
	if err != nil {
		t.Fatal(err)
	}
	var ra *channels.RetryAfterError
	if err := h.ch.Delete(ctx, to, id); !errors.As(err, &ra) {
		t.Errorf("Delete under 429: %v, want *channels.RetryAfterError", err)
	}
}
