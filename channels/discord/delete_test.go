package discord_test

import (
	"errors"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.AddChannel(channelID, guildID)
	id, err := h.ch.Send(ctx, channels.Outbound{To: to(channelID), Text: "⏳ working…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Delete(ctx, to(channelID), id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if msgs := h.fake.Messages(channelID); len(msgs) != 0 {
		t.Errorf("messages after delete: %+v", msgs)
	}
	if del := h.fake.Deleted(channelID); len(del) != 1 || del[0].ID != id {
		t.Errorf("deleted = %+v, want message %s", del, id)
	}
	if err := h.ch.Delete(ctx, to(channelID), id); err != nil {
		t.Errorf("second Delete of the same message: %v, want nil (already gone)", err)
	}
	if err := h.ch.Delete(ctx, to(channelID), "not-a-snowflake"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Delete with a bad id: %v, want ErrPermanent", err)
	}
}
