package discord_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// Every test runs its own fake Discord: the channel redirects its REST
// calls through its own HTTP client and takes the gateway URL from the
// fake, so nothing is shared between tests and they may run in parallel.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.test.secret-token-value"

// Ids used across tests.
const (
	guildID   = "300000000000000001"
	channelID = "300000000000000002"
	dmID      = "300000000000000003"
	userID    = "400000000000000001"
	otherID   = "400000000000000002"
)

// harness is a Channel running against a fake Discord.
type harness struct {
	*channeltest.Runner
	t    *testing.T
	fake *discordtest.Server
	ch   *discord.Channel
}

// newHarness builds a Channel against a new fake. tweak may adjust the
// options before New.
func newHarness(t *testing.T, tweak func(*discord.Options)) *harness {
	t.Helper()
	fake := discordtest.NewServer()
	t.Cleanup(fake.Close)
	return newHarnessOn(t, fake, tweak)
}

// newHarnessOn builds a Channel against an existing fake.
func newHarnessOn(t *testing.T, fake *discordtest.Server, tweak func(*discord.Options)) *harness {
	t.Helper()
	logs := &channeltest.Log{}
	opts := discord.Options{
		Token:  token,
		APIURL: fake.URL(),
		Logger: logs.Logger(),
		Retry:  channels.Retry{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond},
		// Most tests look at every message; TestGuildMessagesNeedMention
		// covers the default.
		AllGuildMessages: true,
	}
	if tweak != nil {
		tweak(&opts)
	}
	ch, err := discord.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &harness{Runner: channeltest.NewRunner(t, ch, logs), t: t, fake: fake, ch: ch}
}

// startReady starts the channel and waits until it is connected.
func (h *harness) startReady() {
	h.t.Helper()
	h.Start(nil)
	h.WaitReady()
}

// to is the address of a channel id.
func to(id string) channels.Address { return channels.Address{Platform: "discord", ChatID: id} }
