// Package slack connects switchboard to Slack with slack-go: it receives
// direct messages, mentions, messages in chosen channels and button presses
// over Socket Mode or the HTTP Events API, and sends, edits and answers
// messages, rendering Markdown as Slack mrkdwn in Block Kit sections. An
// answer the model is still writing streams into its thread with Slack's
// chat.startStream methods, or is posted and edited where the workspace
// lacks them. Files shared with a message arrive as attachments,
// downloaded with the bot token from Slack's file host only; files go out
// with Slack's upload v2.
package slack

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

// Platform is the platform name in addresses and identities.
const Platform = "slack"

// Options configures a Channel. BotToken is required, and at least one of
// AppToken (Socket Mode) and SigningSecret (HTTP Events API).
type Options struct {
	BotToken      string // xoxb-… token from OAuth & Permissions
	AppToken      string // xapp-… app-level token with connections:write; set → Socket Mode
	SigningSecret string // from Basic Information; set → Webhook serves events and interactivity
	APIURL        string // Web API base URL; default https://slack.com/api/
	Logger        *slog.Logger
	// Channels lists channel ids whose every message is delivered, besides
	// direct messages and mentions of the bot anywhere it is a member.
	Channels []string
	// ThreadDirect makes replies to a top-level direct message go into a
	// thread under it, one session per thread, as in channels. By default a
	// direct-message conversation is one session and replies stay in the
	// conversation (a message written in a thread is still answered there).
	ThreadDirect bool

	// Retry: backoff 1s to 30s between auth.test attempts while Slack is
	// unreachable (Socket Mode reconnects with slack-go's own backoff); a
	// call waits out up to 3 answers 429 within 60s. Zero fields take
	// these defaults.
	channels.Retry
}

// Channel is a Slack app connection. It implements channels.Channel,
// Editor, Typer, PressAnswerer, ReadyChecker and LiveAnswerer; Webhook
// serves the HTTP Events API.
type Channel struct {
	opts      Options
	log       *slog.Logger
	api       *slack.Client
	uploads   *slack.Client // api over files: no overall timeout, redirects checked
	files     *http.Client  // downloads and uploads (fileClient)
	transport *http.Transport
	listen    map[string]bool // Options.Channels
	inbox     chan *queued

	running atomic.Bool
	health  *channels.Health

	mu    sync.Mutex
	bot   identity
	users map[string]cachedName // user id → display name
	ims   map[string]string     // user id → IM channel id

	hook webhookState
	live liveState
}

// identity is who the bot is, learned from auth.test.
type identity struct {
	userID string // U…: the bot user, as mentioned in <@U…>
	botID  string // B…: set on the bot's own messages
	teamID string // T…: the workspace the token belongs to
}

var (
	_ channels.Channel       = (*Channel)(nil)
	_ channels.Editor        = (*Channel)(nil)
	_ channels.Typer         = (*Channel)(nil)
	_ channels.PressAnswerer = (*Channel)(nil)
	_ channels.ReadyChecker  = (*Channel)(nil)
	_ channels.LiveAnswerer  = (*Channel)(nil)
)

var (
	errNotStarted = errors.New("slack: not started")
	errStopped    = errors.New("slack: stopped")
)

// inboxSize bounds the events received but not yet handled. The queue
// holds pointers, so an idle channel keeps 2 KB for it, not 40.
const inboxSize = 256

// New builds a Channel. It does not touch the network: Start connects.
func New(opts Options) (*Channel, error) {
	if strings.TrimSpace(opts.BotToken) == "" {
		return nil, errors.New("slack: no bot token; set slack.bot_token to the xoxb- token under OAuth & Permissions of your Slack app")
	}
	if opts.AppToken == "" && opts.SigningSecret == "" {
		return nil, errors.New("slack: no way to receive events; set slack.app_token (Socket Mode) or slack.signing_secret (HTTP Events API at /webhooks/slack)")
	}
	if opts.APIURL == "" {
		opts.APIURL = slack.APIURL
	}
	if !strings.HasSuffix(opts.APIURL, "/") {
		opts.APIURL += "/"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Retry = opts.Retry.WithDefaults(30 * time.Second)
	c := &Channel{
		opts:      opts,
		log:       opts.Logger.With("platform", Platform),
		transport: http.DefaultTransport.(*http.Transport).Clone(),
		listen:    map[string]bool{},
		inbox:     make(chan *queued, inboxSize),
		users:     map[string]cachedName{},
		ims:       map[string]string{},
	}
	for _, id := range opts.Channels {
		if id = strings.TrimSpace(id); id != "" {
			c.listen[id] = true
		}
	}
	c.health = channels.NewHealth(Platform, c.log, c.redact)
	c.health.Set(errNotStarted)
	c.hook.seen = map[string]time.Time{}
	c.live.init()
	c.hook.rejects = &channels.WebhookRejects{Log: c.log, Platform: Platform, Hint: "check slack.signing_secret"}
	c.api = slack.New(opts.BotToken,
		slack.OptionAPIURL(opts.APIURL),
		slack.OptionAppLevelToken(opts.AppToken),
		slack.OptionHTTPClient(&http.Client{Transport: c.transport, Timeout: 30 * time.Second}),
		slack.OptionLog(libLog{c.log}),
	)
	c.files = c.fileClient()
	c.uploads = slack.New(opts.BotToken,
		slack.OptionAPIURL(opts.APIURL),
		slack.OptionHTTPClient(c.files),
		slack.OptionLog(libLog{c.log}),
	)
	return c, nil
}

// Platform returns "slack".
func (c *Channel) Platform() string { return Platform }

// libLog sends slack-go's own (debug) output to slog.
type libLog struct{ log *slog.Logger }

// Output implements slack-go's logger.
func (l libLog) Output(_ int, s string) error {
	l.log.Debug("slack library", "detail", strings.TrimSpace(s))
	return nil
}

// redact hides the tokens and the signing secret in err's message, keeping
// err in the chain.
func (c *Channel) redact(err error) error {
	return channels.Redact(err, c.opts.BotToken, c.opts.AppToken, c.opts.SigningSecret)
}
