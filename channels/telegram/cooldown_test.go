package telegram_test

import (
	"errors"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

// Telegram's flood control is per chat: a 429 on the typing indicator
// bans the chat for every call, so the reply sent right after it waits
// out the retry_after instead of extending the ban, and another chat is
// not held up.
func TestACooldownHoldsEveryCallToTheChat(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	limited := channels.Address{Platform: "telegram", ChatID: "71"}
	other := channels.Address{Platform: "telegram", ChatID: "72"}
	h.fake.FloodChat(71, 1)

	var ra *channels.RetryAfterError
	if err := h.ch.Typing(ctx, limited); !errors.As(err, &ra) {
		t.Fatalf("Typing into a flood = %v, want a RetryAfterError", err)
	}
	if err := h.ch.Typing(ctx, limited); !errors.As(err, &ra) || ra.After <= 0 {
		t.Fatalf("a second Typing during the cooldown = %v, want a RetryAfterError without a call", err)
	}
	if _, err := h.ch.Send(ctx, channels.Outbound{To: other, Text: "not held up"}); err != nil {
		t.Fatalf("Send to another chat: %v", err)
	}
	if _, err := h.ch.Send(ctx, channels.Outbound{To: limited, Text: "after the cooldown"}); err != nil {
		t.Fatalf("Send after a 429: %v", err)
	}
	if early := h.fake.TooEarly(71); len(early) > 0 {
		t.Errorf("%d call(s) reached the chat before its retry_after had passed", len(early))
	}
	if got := h.fake.Messages(71); len(got) != 1 || got[0].Text != "after the cooldown" {
		t.Errorf("limited chat got %+v", got)
	}
}
