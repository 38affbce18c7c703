package discord_test

import (
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

// TestSendWithKeyIsDeduplicatedByDiscord: a message sent again with the
// same Key (a delivery repeated after a crash) is not posted twice: every
// part carries a nonce Discord enforces. Without a Key it is posted again.
func TestSendWithKeyIsDeduplicatedByDiscord(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	ctx := h.Ctx()
	text := strings.Repeat("word ", 500) // 2 500 characters: two parts
	msg := channels.Outbound{To: to(channelID), Text: text, Key: "sb41"}
	first, err := h.ch.Send(ctx, msg)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if n := len(h.fake.Messages(channelID)); n != 2 {
		t.Fatalf("first send posted %d messages, want 2 parts", n)
	}
	again, err := h.ch.Send(ctx, msg)
	if err != nil {
		t.Fatalf("Send again: %v", err)
	}
	msgs := h.fake.Messages(channelID)
	if len(msgs) != 2 || again != first {
		t.Fatalf("the repeat posted again: %d messages, ids %s and %s", len(msgs), first, again)
	}
	if msgs[0].Nonce == "" || msgs[0].Nonce == msgs[1].Nonce {
		t.Fatalf("parts' nonces = %q, %q; want two different ones", msgs[0].Nonce, msgs[1].Nonce)
	}

	msg.Key = ""
	for range 2 {
		if _, err := h.ch.Send(ctx, msg); err != nil {
			t.Fatalf("Send without key: %v", err)
		}
	}
	if n := len(h.fake.Messages(channelID)); n != 6 {
		t.Fatalf("%d messages after two sends without a key, want 6", n)
	}
}
