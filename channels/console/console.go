// Package console is a channel on the local terminal: lines typed on stdin
// are messages from the operator, replies are printed. It lets anyone try
// the bot with `switchboard chat` without any chat platform.
package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Platform is the console's platform name; the operator is console:local.
const Platform = "console"

// Options configures the console channel.
type Options struct {
	In     io.Reader
	Out    io.Writer
	User   string // display name of the operator (default "you")
	Prompt string // printed before each input line (default "> ")
	// OnEOF is called when input ends (Ctrl-D), e.g. to stop the daemon.
	OnEOF func()
}

// Channel is the terminal channel.
type Channel struct {
	o     Options
	mu    sync.Mutex
	seq   atomic.Int64
	msgID atomic.Int64
	run   string // per-process nonce so event ids never repeat across runs
	// working is true while a "… working" line is shown (between the
	// first Typing of a run and the next reply).
	working bool
}

// New returns a console channel.
func New(o Options) *Channel {
	if o.User == "" {
		o.User = "you"
	}
	if o.Prompt == "" {
		o.Prompt = "> "
	}
	return &Channel{o: o, run: strconv.FormatInt(time.Now().UnixNano(), 36)}
}

// Platform implements channels.Channel.
func (c *Channel) Platform() string { return Platform }

// Address is where console messages come from and go to.
func Address() channels.Address { return channels.Address{Platform: Platform, ChatID: "local"} }

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
			if line == "" {
				c.prompt()
				continue
			}
			n := c.seq.Add(1)
			err := h(ctx, channels.Inbound{
				Platform: Platform, ChatID: "local", UserID: "local", UserName: c.o.User,
				Text: line, Direct: true, MessageID: strconv.FormatInt(n, 10),
				ExternalID: "console-" + c.run + "-" + strconv.FormatInt(n, 10),
			})
			if err != nil && ctx.Err() == nil {
				c.notSaved(err)
			}
		}
	}
}

// Send prints msg (Markdown is readable as it is in a terminal).
func (c *Channel) Send(_ context.Context, msg channels.Outbound) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.working = false
	fmt.Fprintf(c.o.Out, "\n%s\n", msg.Text)
	for _, row := range msg.Buttons {
		for _, b := range row {
			fmt.Fprintf(c.o.Out, "[%s] ", b.Label)
		}
		fmt.Fprintln(c.o.Out)
	}
	fmt.Fprint(c.o.Out, c.o.Prompt)
	return strconv.FormatInt(c.msgID.Add(1), 10), nil
}

// Typing implements channels.Typer: the first call while the agent works
// prints a "… working" line, so the terminal does not look stuck; the reply
// follows it.
func (c *Channel) Typing(context.Context, channels.Address) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.working {
		c.working = true
		fmt.Fprint(c.o.Out, "\n… working")
	}
	return nil
}

// notSaved tells the operator that a line was not stored, so they can type
// it again: there is no platform to redeliver it.
func (c *Channel) notSaved(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.o.Out, "\n(not saved, please type it again: %v)\n%s", err, c.o.Prompt)
}

func (c *Channel) prompt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprint(c.o.Out, c.o.Prompt)
}
