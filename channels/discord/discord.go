// Package discord connects switchboard to Discord with bwmarrin/discordgo:
// it receives messages and button presses over the gateway, and sends,
// edits and acknowledges messages over the REST API, rendering Markdown as
// Discord Markdown with every mention disarmed.
//
// # Bot setup
//
// The bot identifies with the intents Guilds, GuildMessages, DirectMessages
// and MessageContent. MessageContent is privileged: enable "Message Content
// Intent" under Bot → Privileged Gateway Intents in the Discord Developer
// Portal, or Discord refuses the connection (close code 4014) and Start
// returns an error saying so.
//
// # Addresses
//
// A Discord thread is a channel of its own, so an Address is just
// {Platform: "discord", ChatID: <channel id>}; a ThreadID, when set, is used
// as the channel. A ChatID may also be a user id (the bot builds approvers'
// addresses from "discord:<user id>"): the channel opens, caches and uses
// that user's direct-message channel, either at once for users it has seen
// or after Discord answers Unknown Channel.
//
// # Files
//
// A message's attachments reach the handler as Inbound.Attachments (a
// message may carry files and no text). Their URLs come in the message, so
// Open fetches only https URLs on Discord's CDN (cdn.discordapp.com,
// media.discordapp.net), or on the Options.APIURL server when that is not
// Discord's; any other link, or a redirect off those hosts, is refused
// unfetched. A file going out (Outbound.File) is streamed as files[0] of a
// multipart message create, the text its caption; one over
// Options.MaxFileBytes is refused with *channels.FileTooLargeError unread.
// Discord has no voice-message upload without a waveform, so a voice goes
// out as an audio file, which Discord plays inline.
//
// # Rate limits and shutdown
//
// discordgo's own limiter paces requests per route from Discord's
// X-RateLimit headers (it sleeps without a context). A 429 that still
// happens is waited out when short (Options.MaxRetries, MaxRetryWait) and
// otherwise returned as *channels.RetryAfterError. Stopping takes about a
// second: discordgo sends a close frame and waits for Discord to see it.
// No goroutine outlives Start.
//
// # API URL
//
// discordgo builds every REST URL from package-level variables
// (discordgo.EndpointAPI and friends). This package never changes them:
// when Options.APIURL is not Discord's, each Channel's own HTTP client
// rewrites requests for discord.com to APIURL (see transport.go). The
// gateway URL comes from GET /gateway on that API, so a test server serves
// its own websocket. Channels with different API URLs can run side by side
// in one process.
package discord

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
)

// Platform is the platform name in addresses and identities.
const Platform = "discord"

// DefaultAPIURL is Discord's API host.
const DefaultAPIURL = "https://discord.com"

// DefaultMaxFileBytes is Discord's upload limit for a bot in a server
// without boosts and in direct messages: 10 MiB.
const DefaultMaxFileBytes = 10 << 20

// Intents are the gateway intents the channel asks for. MessageContent is
// privileged and must be enabled in the Developer Portal.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent

// Options configures a Channel. Only Token is required.
type Options struct {
	Token  string       // bot token from the Developer Portal, with or without "Bot "
	APIURL string       // API host; default DefaultAPIURL ("https://discord.com")
	Logger *slog.Logger // default: discarded

	// Retry: backoff 1s to 60s while Discord is unreachable; a send waits
	// out up to 3 answers 429 within 60s. Zero fields take these defaults.
	channels.Retry
	// AllGuildMessages passes on every message in servers; by default only
	// messages that mention the bot or reply to it count there (direct
	// messages always do).
	AllGuildMessages bool
	// MaxFileBytes is the largest file Send attaches; a larger one is
	// refused with *channels.FileTooLargeError before any of it is read.
	// Default DefaultMaxFileBytes; a boosted server takes more.
	MaxFileBytes int64
	// Sessions, when set, keeps the gateway session so that the replica
	// holding the gateway next (or this one, restarted) resumes it and
	// Discord replays the events sent in between. Stopping then leaves
	// the session resumable instead of ending it.
	Sessions SessionStore
}

// Channel is a Discord bot connection. It implements channels.Channel,
// Editor, Typer, PressAnswerer and ReadyChecker.
type Channel struct {
	opts    Options
	token   string // without the "Bot " prefix, for redaction
	log     *slog.Logger
	sess    *discordgo.Session
	files   *http.Client // attachment downloads; bounded by the caller's context
	uploads *http.Client // file sends, streamed
	conns   *connTracker
	dms     *directory

	running  atomic.Bool
	stopping atomic.Bool
	queue    atomic.Pointer[queue]
	lost     chan struct{} // the gateway connection dropped

	health *channels.Health // Ready, and outage logging once per streak
	hand   handover         // the gateway session's stored progress

	mu    sync.Mutex
	botID string
}

var (
	_ channels.Channel       = (*Channel)(nil)
	_ channels.Editor        = (*Channel)(nil)
	_ channels.Typer         = (*Channel)(nil)
	_ channels.PressAnswerer = (*Channel)(nil)
	_ channels.ReadyChecker  = (*Channel)(nil)
)

var (
	errNotStarted = errors.New("discord: not started")
	errStopped    = errors.New("discord: stopped")
	errConnecting = errors.New("discord: connecting to the gateway")
	errLost       = errors.New("the connection dropped; reconnecting")
)

// New builds a Channel. It does not touch the network: Start connects,
// though Send and the other REST calls work without it.
func New(opts Options) (*Channel, error) {
	token := strings.TrimSpace(opts.Token)
	if rest, ok := strings.CutPrefix(token, "Bot"); ok && (rest == "" || rest[0] == ' ') {
		token = strings.TrimSpace(rest)
	}
	if token == "" {
		return nil, errors.New("discord: no bot token; set discord.token to the token from the Developer Portal (Bot → Reset Token)")
	}
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	opts.Retry = opts.Retry.WithDefaults(60 * time.Second)
	transport, err := newTransport(opts.APIURL)
	if err != nil {
		return nil, err
	}
	sess, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	c := &Channel{
		opts:  opts,
		token: token,
		log:   opts.Logger.With("platform", Platform),
		sess:  sess,
		conns: &connTracker{},
		dms:   newDirectory(),
		lost:  make(chan struct{}, 1),
	}
	c.health = channels.NewHealth(Platform, c.log, func(err error) error { return c.redact(err) })
	c.health.Set(errNotStarted)
	sess.Client = &http.Client{Transport: transport, Timeout: 30 * time.Second}
	c.files = c.fileHosts().Client(transport)
	c.uploads = uploadClient(transport)
	sess.Dialer = c.conns.dialer()
	sess.Identify.Intents = Intents
	sess.ShouldReconnectOnError = false // Start reconnects, with backoff and a way to stop
	sess.ShouldRetryOnRateLimit = false // sends wait out 429s themselves, honouring ctx
	sess.StateEnabled = false
	sess.SyncEvents = true // events reach our handlers in order; they only queue work
	sess.LogLevel = -1     // discordgo logs with the log package; we log with slog
	sess.AddHandler(c.onReady)
	sess.AddHandler(c.onResumed)
	sess.AddHandler(c.onDisconnect)
	sess.AddHandler(c.onMessage)
	sess.AddHandler(c.onInteraction)
	sess.AddHandler(c.onEvent) // after the typed handlers: marks each event stored
	return c, nil
}

// Platform returns "discord".
func (c *Channel) Platform() string { return Platform }

// redact hides the bot token and the given secrets (interaction tokens) in
// err's message, keeping err in the chain.
func (c *Channel) redact(err error, secrets ...string) error {
	return channels.Redact(err, append(secrets, c.token)...)
}
