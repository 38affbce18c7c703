package discord_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/channels/discord"
)

// memSessions is an in-memory discord.SessionStore with the epoch fencing
// of the Redis one (whose contract storage/redis tests against Redis).
type memSessions struct {
	mu    sync.Mutex
	s     discord.GatewaySession
	epoch int64
}

func (m *memSessions) ClaimGatewaySession(context.Context) (discord.GatewaySession, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.epoch++
	return m.s, m.epoch, nil
}

func (m *memSessions) SaveGatewaySession(_ context.Context, epoch int64, s discord.GatewaySession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if epoch < m.epoch {
		return errors.New("fenced")
	}
	m.s = s
	return nil
}

func (m *memSessions) get() discord.GatewaySession {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s
}

// TestGatewaySessionMovesBetweenChannels: one channel stops (its session
// left resumable), messages arrive while no one is connected, and a second
// channel (another replica) resumes the stored session: Discord replays
// exactly the messages sent in between, and nobody identifies again.
func TestGatewaySessionMovesBetweenChannels(t *testing.T) {
	store := &memSessions{}
	a := newHarness(t, func(o *discord.Options) { o.Sessions = store })
	a.fake.AddChannel(channelID, guildID)
	a.startReady()
	first := a.fake.SendMessage(channelID, guildID, userID, "Ann", "before the hand-over")
	if in := a.Next(); in.ExternalID != first {
		t.Fatalf("a got %+v", in)
	}
	a.Stop()
	if s := store.get(); s.ID == "" || s.Seq < 2 {
		t.Fatalf("stored session after a stopped: %+v", s)
	}
	var missed []string
	for _, text := range []string{"sent while nobody held the gateway", "and another"} {
		missed = append(missed, a.fake.SendMessage(channelID, guildID, userID, "Ann", text))
	}

	b := newHarnessOn(t, a.fake, func(o *discord.Options) { o.Sessions = store })
	b.startReady()
	for _, id := range missed {
		if in := b.Next(); in.ExternalID != id {
			t.Fatalf("b got %+v, want the missed message %s", in, id)
		}
	}
	if got := a.fake.Resumes(); got != 1 {
		t.Errorf("%d resumes, want 1", got)
	}
	if got := len(a.fake.Identifies()); got != 1 {
		t.Errorf("%d identifies, want 1 (b resumes)", got)
	}
	after := a.fake.SendMessage(channelID, guildID, userID, "Ann", "after the hand-over")
	if in := b.Next(); in.ExternalID != after {
		t.Fatalf("b got %+v, want %s", in, after)
	}
	select {
	case in := <-b.Inbound:
		t.Errorf("b got an extra event %+v", in)
	default:
	}
}

// TestGatewaySessionUnknownIdentifiesAfresh: a stored session Discord no
// longer knows ends in a fresh Identify, not an error.
func TestGatewaySessionUnknownIdentifiesAfresh(t *testing.T) {
	store := &memSessions{s: discord.GatewaySession{ID: "gone", Seq: 12}}
	h := newHarness(t, func(o *discord.Options) { o.Sessions = store })
	h.fake.AddChannel(channelID, guildID)
	h.startReady()
	id := h.fake.SendMessage(channelID, guildID, userID, "Ann", "hello")
	if in := h.Next(); in.ExternalID != id {
		t.Fatalf("got %+v", in)
	}
	if got := len(h.fake.Identifies()); got != 1 {
		t.Errorf("%d identifies, want 1", got)
	}
}
