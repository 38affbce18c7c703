package discord

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// discordInteraction is an interaction whose token holds a colon.
var discordInteraction = discordgo.Interaction{ID: "5001", AppID: "6001", Token: "aW50ZXJhY3Rpb246tok:en.with-colon"}

func TestPressIDRoundTrip(t *testing.T) {
	in := encodePress(&discordInteraction)
	got, ok := decodePress(in)
	if !ok || got.ID != discordInteraction.ID || got.AppID != discordInteraction.AppID || got.Token != discordInteraction.Token {
		t.Errorf("decodePress(%q) = %+v, %v", in, got, ok)
	}
	for _, bad := range []string{"", "1", "1:2", "1::t", ":2:t"} {
		if _, ok := decodePress(bad); ok {
			t.Errorf("decodePress(%q) accepted", bad)
		}
	}
	if got := redactPressID(in); strings.Contains(got, discordInteraction.Token) {
		t.Errorf("redactPressID kept the token: %q", got)
	}
}
