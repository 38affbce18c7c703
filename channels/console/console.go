// Package console is a channel on the local terminal: lines typed on stdin
// are messages from the operator, replies are printed. It lets anyone try
// the bot with `switchboard chat` without any chat platform.
//
// Buttons (an approval's Allow once / Always allow / Deny, an access
// request's Approve / Deny) are printed as numbered choices under their
// message, which gets a number of its own (#3). Typing a choice's number
// presses it on the newest message that still has choices; "/allow 3" and
// "/deny 3" press on message #3. A press reaches the handler as a
// channels.ButtonPress from console:local, exactly as a platform's button
// press does, so it is decided by the same checks and the same durable
// transition.
package console

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

// Platform is the console's platform name; the operator is console:local.
const Platform = "console"

// UserID is the operator's user id: their identity is console:local.
const UserID = "local"

// Options configures the console channel.
type Options struct {
	In     io.Reader
	Out    io.Writer
	User   string // display name of the operator (default "you")
	Prompt string // printed before each input line (default "> ")
	// Color styles replies with ANSI sequences: set it only when Out is a
	// terminal.
	Color bool
	// OnEOF is called when input ends (Ctrl-D), e.g. to stop the daemon.
	OnEOF func()
}

// Channel is the terminal channel.
type Channel struct {
	o     Options
	seq   atomic.Int64 // inbound events (lines and presses)
	msgID atomic.Int64
	run   string // per-process nonce so event ids never repeat across runs

	mu sync.Mutex // guards what follows and every write to Out
	// working is true while a "… working" line is shown (between the
	// first Typing of a run and the next reply).
	working bool
	// open is the unfinished last line on Out (the prompt), "" when Out is
	// at the start of a line.
	open string
	// choices are the buttons of each message that still has them, by
	// message id; newest is the highest such id.
	choices map[int64][]channels.Button
}

var (
	_ channels.Channel       = (*Channel)(nil)
	_ channels.Typer         = (*Channel)(nil)
	_ channels.Editor        = (*Channel)(nil)
	_ channels.PressAnswerer = (*Channel)(nil)
)

// New returns a console channel.
func New(o Options) *Channel {
	if o.User == "" {
		o.User = "you"
	}
	if o.Prompt == "" {
		o.Prompt = "> "
	}
	return &Channel{o: o, run: strconv.FormatInt(time.Now().UnixNano(), 36), choices: map[int64][]channels.Button{}}
}

// Platform implements channels.Channel.
func (c *Channel) Platform() string { return Platform }

// Address is where console messages come from and go to.
func Address() channels.Address { return channels.Address{Platform: Platform, ChatID: UserID} }

// Start reads lines until input ends or ctx is cancelled. A line the
// handler could not store is reported on Out, to be typed again.
func (c *Channel) Start(ctx context.Context, h channels.Handler) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(c.o.In)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	c.prompt()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				if c.o.OnEOF != nil {
					c.o.OnEOF()
				}
				return nil
			}
			c.handleLine(ctx, h, line)
		}
	}
}

// handleLine turns one typed line into a press or a message.
func (c *Channel) handleLine(ctx context.Context, h channels.Handler, line string) {
	if isBlank(line) {
		c.prompt()
		return
	}
	if press, handled := c.pressFor(line); handled {
		if press != nil {
			c.deliver(ctx, h, channels.Inbound{MessageID: press.MessageID, Press: press})
		}
		return
	}
	c.deliver(ctx, h, channels.Inbound{Text: line})
}

// deliver hands in, from the operator, to the handler.
func (c *Channel) deliver(ctx context.Context, h channels.Handler, in channels.Inbound) {
	n := strconv.FormatInt(c.seq.Add(1), 10)
	in.Platform, in.ChatID, in.UserID, in.UserName, in.Direct = Platform, UserID, UserID, c.o.User, true
	in.ExternalID = "console-" + c.run + "-" + n
	if in.Press != nil {
		in.Press.ID = in.ExternalID
	} else {
		in.MessageID = n
	}
	if err := h(ctx, in); err != nil && ctx.Err() == nil {
		c.notSaved(err)
	}
}

// Send prints msg, its Markdown rendered for the terminal, and its buttons
// as numbered choices.
func (c *Channel) Send(_ context.Context, msg channels.Outbound) (string, error) {
	id := c.msgID.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.working = false
	c.startLine()
	c.writeLines(markup.Terminal(msg.Text, c.o.Color))
	c.setChoices(id, msg.Buttons)
	c.writePrompt()
	return strconv.FormatInt(id, 10), nil
}

// Edit implements channels.Editor: the new text is printed under the
// message's number, and its choices are replaced (a decided request has
// none left, so its numbers stop pressing anything).
func (c *Channel) Edit(_ context.Context, _ channels.Address, messageID string, msg channels.Outbound) error {
	id, err := strconv.ParseInt(messageID, 10, 64)
	if err != nil || id <= 0 || id > c.msgID.Load() {
		return channels.ErrPermanent
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.startLine()
	c.writeLines("(#" + messageID + " updated)\n" + markup.Terminal(msg.Text, c.o.Color))
	c.setChoices(id, msg.Buttons)
	c.writePrompt()
	return nil
}

// AnswerPress implements channels.PressAnswerer: what a platform shows the
// presser as a toast is printed as a line.
func (c *Channel) AnswerPress(_ context.Context, _ channels.ButtonPress, text string) error {
	if text == "" {
		return nil
	}
	c.say(text)
	return nil
}

// Typing implements channels.Typer: the first call while the agent works
// prints a "… working" line, so the terminal does not look stuck; the reply
// follows it.
func (c *Channel) Typing(context.Context, channels.Address) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.working {
		c.working = true
		c.startLine()
		c.writeLines("… working")
	}
	return nil
}

// notSaved tells the operator that a line was not stored, so they can type
// it again: there is no platform to redeliver it.
func (c *Channel) notSaved(err error) {
	c.say("(not saved, please type it again: " + err.Error() + ")")
}

// Ready implements channels.ReadyChecker: the terminal is always there.
func (c *Channel) Ready(context.Context) error { return nil }
