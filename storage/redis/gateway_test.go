package redis_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/channels/discord"
)

// TestGatewaySessionHandover: a claim returns the last saved session and a
// higher epoch; saves under an older epoch (a replica that lost the
// gateway) change nothing.
func TestGatewaySessionHandover(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := testContext(t)
			s := b.open(t)
			first, e1, err := s.ClaimGatewaySession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if first != (discord.GatewaySession{}) || e1 < 1 {
				t.Fatalf("first claim: %+v epoch %d", first, e1)
			}
			want := discord.GatewaySession{ID: "abc", Seq: 41}
			if err := s.SaveGatewaySession(ctx, e1, want); err != nil {
				t.Fatal(err)
			}
			got, e2, err := s.ClaimGatewaySession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || e2 <= e1 {
				t.Fatalf("second claim: %+v epoch %d, want %+v and an epoch above %d", got, e2, want, e1)
			}
			// The old holder saves late: fenced out.
			if err := s.SaveGatewaySession(ctx, e1, discord.GatewaySession{ID: "abc", Seq: 7}); err == nil {
				t.Error("a save under an old epoch was accepted")
			}
			newer := discord.GatewaySession{ID: "abc", Seq: 99}
			if err := s.SaveGatewaySession(ctx, e2, newer); err != nil {
				t.Fatal(err)
			}
			if got, _, err := s.ClaimGatewaySession(ctx); err != nil || got != newer {
				t.Fatalf("third claim: %+v %v, want %+v", got, err, newer)
			}
		})
	}
}
