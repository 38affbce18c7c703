// Package telegram connects switchboard to Telegram with go-telegram/bot: it
// long-polls for messages and button presses, and sends, edits and
// acknowledges messages, rendering Markdown as Telegram HTML; answers can
// show while they are written (drafts in private chats, else edited
// messages).
package telegram

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"

	"github.com/switchboard-chat/switchboard/channels"
)

// Platform is the platform name in addresses and identities.
const Platform = "telegram"

// Command is a bot command shown in Telegram's command menu.
type Command struct {
	Name        string // without the slash: "help"
	Description string
}

// Options configures a Channel. Only Token is required.
type Options struct {
	Token       string        // bot token from @BotFather
	APIURL      string        // Bot API base URL; default https://api.telegram.org
	Logger      *slog.Logger  // default: discarded
	PollTimeout time.Duration // long-poll duration of getUpdates; default 30s
	Commands    []Command     // registered with setMyCommands on connect, when set

	// Retry: backoff 1s to 30s while the API is unreachable; a send waits
	// out up to 3 answers 429 within 60s. Zero fields take these defaults.
	channels.Retry
	// MaxParallelChats bounds how many chats' updates are handled at once;
	// default 32.
	MaxParallelChats int

	// AlbumWait is how long the parts of an album (photos sent together)
	// are awaited after the latest one before the album is handed over as
	// one message; default 1s.
	AlbumWait time.Duration

	// Webhook, when its URL is set, receives updates over HTTP instead of
	// long polling: Telegram posts each update to URL, and Webhook serves
	// them. Secret must come with every request.
	Webhook WebhookOptions
	// Albums keeps the parts of albums posted to the webhook; webhook mode
	// needs it.
	Albums AlbumStore

	// RequireMention passes on, in groups and supergroups, only messages
	// meant for the bot: those mentioning it, replying to one of its
	// messages, or commands not naming another bot. Others are dropped
	// unstored. Private chats and button presses are not affected; by
	// default every message is passed on.
	RequireMention bool
}

// WebhookOptions configures webhook mode.
type WebhookOptions struct {
	// URL is the address the Bot API posts updates to, e.g.
	// https://bot.example.com/webhooks/telegram: https:// for Telegram's
	// own API, http:// too for a local Bot API server (APIURL).
	URL string
	// Secret is sent by Telegram in X-Telegram-Bot-Api-Secret-Token with
	// every update: 1–256 characters of A–Z, a–z, 0–9, _ and -.
	Secret string
	// Wait bounds how long a request waits for its update to be stored
	// before it is answered 503 and Telegram sends it again; default 20s.
	Wait time.Duration
}

// Channel is a Telegram bot connection. It implements channels.Channel,
// Editor, Typer, PressAnswerer, ReadyChecker and LiveAnswerer.
type Channel struct {
	opts      Options
	log       *slog.Logger
	bot       *bot.Bot
	uploads   *bot.Bot // sends files: no overall timeout, the caller's context bounds an upload
	transport *http.Transport
	files     *http.Client // file downloads, over transport; bounded by the caller's context
	inflight  inflight
	lanes     *chatLanes

	running atomic.Bool
	handler atomic.Pointer[channels.Handler]
	me      atomic.Pointer[identity] // the bot's account, from getMe

	health *channels.Health // Ready, and outage logging once per streak
	// cooldowns are the chats Telegram answered 429 lately: every call to
	// such a chat waits until its latest retry_after has passed.
	cooldowns channels.Cooldowns
	// drafts remembers where sendMessageDraft is refused; finished, which
	// messages show the parts of the latest final answers (FinishLive).
	drafts   draftSupport
	finished placements

	hooks   webhookGate              // webhook requests being handled
	rejects *channels.WebhookRejects // refused webhook requests
	albums  *albumCollector          // polled albums being collected
	// owner names this channel's claims on webhook albums; albumStored
	// wakes the album sweep when a part was stored.
	owner       string
	albumStored chan struct{}
}

var (
	_ channels.Channel       = (*Channel)(nil)
	_ channels.Editor        = (*Channel)(nil)
	_ channels.Typer         = (*Channel)(nil)
	_ channels.PressAnswerer = (*Channel)(nil)
	_ channels.ReadyChecker  = (*Channel)(nil)
)

var errNotStarted = errors.New("telegram: not started")

// New builds a Channel. It does not touch the network: Start connects.
func New(opts Options) (*Channel, error) {
	if strings.TrimSpace(opts.Token) == "" {
		return nil, errors.New("telegram: no bot token; set telegram.token to the token @BotFather gave you")
	}
	if err := opts.Webhook.check(opts.APIURL); err != nil {
		return nil, err
	}
	if opts.Webhook.URL != "" && opts.Albums == nil {
		return nil, errors.New("telegram: webhook mode needs Options.Albums, the store of albums' parts")
	}
	if opts.APIURL == "" {
		opts.APIURL = "https://api.telegram.org"
	}
	opts.APIURL = strings.TrimRight(opts.APIURL, "/")
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 30 * time.Second
	}
	opts.PollTimeout = max(opts.PollTimeout, 2*time.Second) // getUpdates takes whole seconds
	opts.Retry = opts.Retry.WithDefaults(30 * time.Second)
	if opts.MaxParallelChats <= 0 {
		opts.MaxParallelChats = 32
	}
	if opts.AlbumWait <= 0 {
		opts.AlbumWait = defaultAlbumWait
	}
	c := &Channel{
		opts:        opts,
		log:         opts.Logger.With("platform", Platform),
		transport:   apiTransport(opts.MaxParallelChats),
		lanes:       newChatLanes(opts.MaxParallelChats),
		albums:      newAlbumCollector(opts.AlbumWait),
		owner:       rand.Text(),
		albumStored: make(chan struct{}, 1),
		drafts:      newDraftSupport(),
		finished:    newPlacements(),
	}
	c.files = c.fileHosts().Client(c.transport)
	c.health = channels.NewHealth(Platform, c.log, c.redact)
	c.rejects = &channels.WebhookRejects{Log: c.log, Platform: Platform, Hint: "check telegram.webhook_secret"}
	c.health.Set(errNotStarted)
	b, err := c.newBot(0, c.opts.PollTimeout+15*time.Second)
	if err != nil {
		return nil, err
	}
	if c.uploads, err = c.newBot(0, 0); err != nil {
		return nil, err
	}
	c.bot = b
	return c, nil
}

// newBot builds a go-telegram/bot client whose first getUpdates asks for
// the updates after lastUpdateID and whose every call ends after timeout
// (0: only its context ends it). The one New keeps sends; Start polls
// with a fresh one, so that a poll cut short (a lost leadership) never
// confirms updates it fetched but did not hand over.
func (c *Channel) newBot(lastUpdateID int64, timeout time.Duration) (*bot.Bot, error) {
	client := &pollClient{
		http: &http.Client{Transport: c.transport, Timeout: timeout},
		ch:   c,
	}
	b, err := bot.New(c.opts.Token,
		bot.WithServerURL(c.opts.APIURL),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(c.opts.PollTimeout, client),
		bot.WithDefaultHandler(c.dispatch),
		bot.WithNotAsyncHandlers(),
		bot.WithWorkers(1),
		bot.WithUpdatesChannelCap(updatesBuffered),
		bot.WithInitialOffset(lastUpdateID),
		bot.WithAllowedUpdates(allowedUpdates),
		bot.WithErrorsHandler(func(err error) {
			c.log.Debug("telegram client error", "error", c.redact(err))
		}),
		bot.WithDebugHandler(func(string, ...any) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", c.redact(err))
	}
	return b, nil
}

// updatesBuffered is how many fetched updates a client holds for its
// handler. A poll is not sent until the previous one's updates are handled
// (inflight), and Telegram returns at most 100 per poll, so more room than
// that is never used; the library's default, 1 024, kept an 8 KiB buffer
// for each of the two clients for the process's life.
const updatesBuffered = 100

// apiTransport is the HTTP transport to the Bot API. Every call goes to one
// host, from up to parallelChats handlers plus the poller and the senders at
// once, so it keeps that many idle connections: Go's default keeps 2 per
// host and would open (and TLS-handshake) a new one for most calls under
// load.
func apiTransport(parallelChats int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(parallelChats, 32) + 32
	t.MaxIdleConns = max(t.MaxIdleConns, t.MaxIdleConnsPerHost)
	return t
}

// Platform returns "telegram".
func (c *Channel) Platform() string { return Platform }

// redact hides the bot token in err's message, keeping err in the chain.
func (c *Channel) redact(err error) error {
	return channels.Redact(err, c.opts.Token)
}
