package discord

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
)

// textOnlyReply answers a sticker sent without text in a direct message:
// a sticker is neither text nor a file the bot can read.
const textOnlyReply = "I can only read text messages for now."

// ackTimeout bounds acknowledging a press: Discord wants an answer within
// three seconds of the press.
const ackTimeout = 2500 * time.Millisecond

// queueSize is how many events may wait for the handler before the gateway
// reader waits too.
const queueSize = 256

// event is work for the handler goroutine: run, or, for a marker, the
// gateway position reached once every earlier event has run.
type event struct {
	run  func(ctx context.Context, h channels.Handler) error
	mark *GatewaySession
}

// queue carries events from the gateway reader to the handler goroutine,
// in order.
type queue struct {
	events chan event
	done   chan struct{} // closed when Start stops: producers give up
}

func newQueue() *queue {
	return &queue{events: make(chan event, queueSize), done: make(chan struct{})}
}

func (q *queue) close() { close(q.done) }

// enqueue hands ev to the running Start, if any. It blocks while the queue
// is full, which holds the gateway reader back.
func (c *Channel) enqueue(ev event) {
	q := c.queue.Load()
	if q == nil {
		return
	}
	select {
	case q.events <- ev:
	case <-q.done:
	}
}

// work runs queued events until ctx ends or Start stops.
func (c *Channel) work(ctx context.Context, q *queue, h channels.Handler) {
	for {
		select {
		case <-ctx.Done():
			c.dropped(q)
			return
		case <-q.done:
			c.dropped(q)
			return
		case ev := <-q.events:
			c.handle(ctx, h, ev)
		}
	}
}

// dropped logs the events left in q when Start stops. Markers ahead of
// the first of them still count: the events before them were stored.
func (c *Channel) dropped(q *queue) {
	n := 0
	for {
		select {
		case ev := <-q.events:
			switch {
			case ev.run != nil:
				n++
			case ev.mark != nil && n == 0:
				c.marked(*ev.mark)
			}
			continue
		default:
		}
		break
	}
	if n > 0 {
		c.log.Warn("discord events dropped at shutdown", "count", n)
	}
}

// handle runs one event, surviving a panic in the handler.
func (c *Channel) handle(ctx context.Context, h channels.Handler, ev event) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("discord event handler panicked; event dropped", "panic", r)
		}
	}()
	var err error
	if ev.run != nil {
		err = ev.run(ctx, h)
	}
	if ev.mark != nil && err == nil {
		c.marked(*ev.mark)
	}
	if err != nil {
		c.hand.mu.Lock()
		c.hand.broken = true // later events may run, but no later mark holds
		c.hand.mu.Unlock()
	}
}

// addressed reports whether a server message is meant for the bot: it
// mentions the bot or replies to one of its messages.
func (c *Channel) addressed(m *discordgo.Message) bool {
	me := c.bot()
	for _, u := range m.Mentions {
		if u != nil && u.ID == me {
			return true
		}
	}
	if r := m.ReferencedMessage; r != nil && r.Author != nil && r.Author.ID == me {
		return true
	}
	return strings.Contains(m.Content, "<@"+me+">") || strings.Contains(m.Content, "<@!"+me+">")
}

// onMessage delivers a message from a person: its text and its
// attachments, either of which may be empty. Messages from bots (this one
// included), webhooks and the system are ignored; a sticker alone in a
// direct message gets a polite answer.
func (c *Channel) onMessage(_ *discordgo.Session, m *discordgo.MessageCreate) {
	if m.Message == nil || m.Author == nil || m.Author.Bot || m.WebhookID != "" || m.Author.ID == c.bot() {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return
	}
	direct := m.GuildID == ""
	if direct {
		c.dms.remember(m.Author.ID, m.ChannelID)
	} else {
		c.dms.seen(m.Author.ID)
	}
	if !direct && !c.opts.AllGuildMessages && !c.addressed(m.Message) {
		return // in servers only messages meant for the bot count
	}
	if strings.TrimSpace(m.Content) == "" && len(m.Attachments) == 0 {
		if direct && len(m.StickerItems) > 0 {
			channelID, messageID := m.ChannelID, m.ID
			c.stage(event{run: func(ctx context.Context, _ channels.Handler) error {
				c.replyTextOnly(ctx, channelID, messageID)
				return nil
			}})
		}
		return
	}
	text := c.stripMention(m.Content)
	if strings.TrimSpace(text) == "" {
		text = "" // files alone, or just "@bot" with them
	}
	in := channels.Inbound{
		Platform:   Platform,
		ChatID:     m.ChannelID,
		UserID:     m.Author.ID,
		UserName:   displayName(m.Author),
		Text:       text,
		Direct:     direct,
		MessageID:  m.ID,
		ExternalID: m.ID,

		Attachments: c.attachments(m.Message),
	}
	c.stage(event{run: func(ctx context.Context, h channels.Handler) error { return c.deliver(ctx, h, in) }})
}

// deliver calls h, which retries until the event is stored or the channel
// stops (see Start); an event given up at a stop is logged.
func (c *Channel) deliver(ctx context.Context, h channels.Handler, in channels.Inbound) error {
	err := h(ctx, in)
	if err != nil {
		c.log.Warn("discord event dropped at shutdown: not stored", "external_id", in.ExternalID, "error", err)
	}
	return err
}

// onInteraction acknowledges a button press at once, with a deferred
// update (the message may be edited later), and then delivers it. Other
// interactions are ignored.
func (c *Channel) onInteraction(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
	if ic.Interaction == nil || ic.Type != discordgo.InteractionMessageComponent {
		return
	}
	user := ic.User
	if ic.Member != nil && ic.Member.User != nil {
		user = ic.Member.User
	}
	if user == nil || user.Bot {
		return
	}
	c.ack(ic.Interaction)
	direct := ic.GuildID == ""
	if direct {
		c.dms.remember(user.ID, ic.ChannelID)
	} else {
		c.dms.seen(user.ID)
	}
	var messageID string
	if ic.Message != nil {
		messageID = ic.Message.ID
	}
	in := channels.Inbound{
		Platform:  Platform,
		ChatID:    ic.ChannelID,
		UserID:    user.ID,
		UserName:  displayName(user),
		Direct:    direct,
		MessageID: messageID,
		Press: &channels.ButtonPress{
			ID:        encodePress(ic.Interaction),
			Data:      ic.MessageComponentData().CustomID,
			MessageID: messageID,
		},
		ExternalID: ic.ID,
	}
	c.stage(event{run: func(ctx context.Context, h channels.Handler) error { return c.deliver(ctx, h, in) }})
}

// ack answers a press with a deferred message update, so the client stops
// waiting and the press can be answered later with AnswerPress.
func (c *Channel) ack(i *discordgo.Interaction) {
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	err := c.sess.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseDeferredMessageUpdate,
	}, discordgo.WithContext(ctx))
	if err != nil {
		c.log.Warn("discord could not acknowledge a button press; the user sees \"interaction failed\"",
			"interaction_id", i.ID, "error", c.redact(err, i.Token))
	}
}

// encodePress packs what answering a press needs into ButtonPress.ID:
// "<interaction id>:<application id>:<interaction token>". The token lets
// whoever holds it post to the interaction for 15 minutes; do not log it.
func encodePress(i *discordgo.Interaction) string {
	return i.ID + ":" + i.AppID + ":" + i.Token
}

// decodePress unpacks a ButtonPress.ID made by encodePress.
func decodePress(id string) (*discordgo.Interaction, bool) {
	parts := strings.SplitN(id, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return nil, false
	}
	return &discordgo.Interaction{ID: parts[0], AppID: parts[1], Token: parts[2]}, true
}

// mentionPrefix matches a leading user mention.
var mentionPrefix = regexp.MustCompile(`^\s*<@!?(\d+)>\s*`)

// stripMention removes a leading mention of the bot ("@bot do this").
func (c *Channel) stripMention(text string) string {
	m := mentionPrefix.FindStringSubmatch(text)
	if m == nil || m[1] != c.bot() {
		return text
	}
	return text[len(m[0]):]
}

// displayName is the user's display name, else their username.
func displayName(u *discordgo.User) string {
	if u.GlobalName != "" {
		return u.GlobalName
	}
	if u.Username != "" {
		return u.Username
	}
	return u.ID
}

// replyTextOnly tells the sender of a message without text that only text
// is understood.
func (c *Channel) replyTextOnly(ctx context.Context, channelID, messageID string) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err := c.withRetry(ctx, func(ctx context.Context) error {
		_, err := c.sess.ChannelMessageSendComplex(channelID, &discordgo.MessageSend{
			Content:         textOnlyReply,
			Reference:       reference(channelID, messageID),
			AllowedMentions: noMentions(false),
		}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		c.log.Warn("discord could not answer a message without text", "channel_id", channelID, "error", c.redact(err))
	}
}
