package progress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// The note goes to the channel directly, not through the outbox: it is
// ephemeral, and a lost note costs nothing.
const (
	typingAfter      = time.Second
	typingEvery      = 4 * time.Second // Telegram shows "typing…" for ~5s
	progressAfter    = 2 * time.Second
	progressEditGap  = time.Second // at most one edit a second per run
	progressTick     = 200 * time.Millisecond
	progressSteps    = 5  // newest steps shown in the note
	progressArgsMax  = 60 // characters of a step's arguments shown
	progressNote     = "⏳ working…"
	progressDone     = "✓ done"
	lockRefreshEvery = 4 * time.Second // well within the lock's TTL (Options.LockTTL)
)

// Lock is the session lock a run holds; the display refreshes it.
type Lock interface {
	// Refresh extends the lock by ttl.
	Refresh(ctx context.Context, ttl time.Duration) error
}

// Sender sends the note to the chat: a channel adapter. Typing, editing
// and deleting the note are the adapter's optional channels.Typer,
// channels.Editor and channels.Deleter.
type Sender interface {
	// Send delivers msg and returns the platform id of the message sent.
	Send(ctx context.Context, msg channels.Outbound) (messageID string, err error)
}

// Options say where a Display shows and which lock it keeps alive.
type Options struct {
	// To is the chat the run answers.
	To channels.Address
	// Channel is the adapter of To's platform; nil shows nothing (the
	// platform is not served here, or the run is in the background).
	Channel Sender
	// Lock, when set, is refreshed every few seconds, each time by
	// LockTTL.
	Lock    Lock
	LockTTL time.Duration
	// Scrub, when set, removes secrets from the note's text.
	Scrub func(string) string
	// Log receives the platform's refusals, at debug level.
	Log *slog.Logger
	// NoNote leaves the "working…" note out: the answer itself shows the
	// tool steps as it is written (bot/stream).
	NoNote bool
}

// Display shows that a run is working and keeps its session lock alive.
// Start it with Start, report tool steps with Step and end it with Stop.
type Display struct {
	to     channels.Address
	ch     Sender // nil: nothing is shown
	noNote bool
	lock   Lock
	ttl    time.Duration
	scrub  func(string) string
	log    *slog.Logger
	cancel context.CancelFunc
	// loop starts the loop once the run has gone on for typingAfter; done
	// is closed when the loop ends.
	loop *time.Timer
	done chan struct{}
	stop sync.Once

	mu      sync.Mutex
	steps   []string // newest progressSteps steps, rendered
	total   int      // steps so far
	version int      // bumped by every step

	// Owned by the loop goroutine until done is closed.
	noteID  string
	shown   int       // version the note shows
	blocked time.Time // the platform asked us to wait (429) until then
}

// Start starts showing progress in o.To and refreshing o.Lock until Stop.
// Nothing is due in a run's first second, so the loop starts only then: a
// quick run makes no goroutine and no ticker, and its Stop waits for
// nothing.
func Start(ctx context.Context, o Options) *Display {
	ctx, cancel := context.WithCancel(ctx)
	p := &Display{
		to: o.To, ch: o.Channel, lock: o.Lock, ttl: o.LockTTL, scrub: o.Scrub,
		log: o.Log, cancel: cancel, done: make(chan struct{}), noNote: o.NoNote,
	}
	start := time.Now()
	p.loop = time.AfterFunc(typingAfter, func() { p.run(ctx, start) })
	return p
}

// Step records a tool call about to run; the note shows it at its next
// edit. It never blocks on the platform.
func (p *Display) Step(c agentcore.ToolCall) {
	line := StepLine(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total++
	p.version++
	p.steps = append(p.steps, line)
	if len(p.steps) > progressSteps {
		p.steps = p.steps[len(p.steps)-progressSteps:]
	}
}

// Stop ends the display and the lock refresh and removes the note: it is
// deleted, or edited to a short "done" where the platform cannot delete.
// It is safe to call more than once.
func (p *Display) Stop(ctx context.Context) {
	p.stop.Do(func() {
		p.cancel()
		if p.loop.Stop() {
			return // the loop never started: nothing was shown
		}
		<-p.done
		if p.noteID == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if d, ok := p.ch.(channels.Deleter); ok {
			err := d.Delete(ctx, p.to, p.noteID)
			if err == nil {
				return
			}
			p.log.Debug("progress note not deleted; editing it instead", "err", err)
		}
		if ed, ok := p.ch.(channels.Editor); ok {
			if err := ed.Edit(ctx, p.to, p.noteID, channels.Outbound{To: p.to, Text: progressDone}); err != nil {
				p.log.Debug("progress note not closed", "err", err)
			}
		}
	})
}

// run drives typing, the note and the lock refresh until ctx ends. It
// starts when the first of them is due and looks at once, then every
// progressTick.
func (p *Display) run(ctx context.Context, start time.Time) {
	defer close(p.done)
	typer, _ := p.ch.(channels.Typer)
	editor, _ := p.ch.(channels.Editor)
	nextTyping := start.Add(typingAfter)
	nextRefresh := start.Add(lockRefreshEvery)
	noteDue := start.Add(progressAfter)
	// A note that cannot be edited in place (the console) would only
	// pile up: such channels get none.
	noteGaveUp := editor == nil || p.noNote
	var lastEdit time.Time
	tick := time.NewTicker(progressTick)
	defer tick.Stop()
	first := make(chan struct{}, 1) // the first look, at once
	if ctx.Err() == nil {
		first <- struct{}{} // unless Stop came as the loop started
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-first:
		case <-tick.C:
		}
		now := time.Now()
		if p.lock != nil && !now.Before(nextRefresh) {
			nextRefresh = now.Add(lockRefreshEvery)
			if err := p.lock.Refresh(ctx, p.ttl); err != nil && ctx.Err() == nil {
				// Redis outages are logged once by the store.
				p.log.Debug("session lock refresh failed", "err", err)
			}
		}
		if now.Before(p.blocked) {
			continue
		}
		if typer != nil && !now.Before(nextTyping) {
			nextTyping = now.Add(typingEvery)
			if err := typer.Typing(ctx, p.to); err != nil && ctx.Err() == nil {
				p.platformError("typing indicator failed", err)
			}
		}
		switch {
		case p.noteID == "" && !noteGaveUp && !now.Before(noteDue):
			text, version := p.text()
			// Not cut short by Stop: a note sent without its id known
			// could not be deleted.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			id, err := p.ch.Send(sctx, channels.Outbound{To: p.to, Text: text})
			cancel()
			switch {
			case err == nil && id != "":
				p.noteID, p.shown, lastEdit = id, version, now
			case err == nil || !p.platformError("progress note not sent", err):
				noteGaveUp = true // only a 429 is worth another try
			}
		case p.noteID != "" && now.Sub(lastEdit) >= progressEditGap:
			text, version := p.text()
			if version == p.shown {
				continue
			}
			lastEdit = now
			ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := editor.Edit(ectx, p.to, p.noteID, channels.Outbound{To: p.to, Text: text})
			cancel()
			if err == nil {
				p.shown = version
			} else if ctx.Err() == nil {
				p.platformError("progress note not edited", err)
			}
		}
	}
}

// platformError logs err at debug level and, when the platform asked us
// to slow down, pauses typing and edits for as long as it said. It
// reports whether err was such a 429.
func (p *Display) platformError(msg string, err error) bool {
	var ra *channels.RetryAfterError
	limited := errors.As(err, &ra)
	if limited {
		p.blocked = time.Now().Add(ra.After)
	}
	p.log.Debug(msg, "err", err)
	return limited
}

// text renders the note and returns the version it shows.
func (p *Display) text() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	b.WriteString(progressNote)
	if earlier := p.total - len(p.steps); earlier > 0 {
		fmt.Fprintf(&b, "\n… %d earlier step(s)", earlier)
	}
	for _, s := range p.steps {
		b.WriteString("\n• ")
		b.WriteString(s)
	}
	text := b.String()
	if p.scrub != nil {
		text = p.scrub(text)
	}
	return text, p.version
}

// StepLine renders a tool call as "`name args`" with its arguments cut
// short, as inline code so nothing in them is read as Markdown.
func StepLine(c agentcore.ToolCall) string {
	s := c.Name
	if args := shortArgs(c.Arguments); args != "" {
		s += " " + args
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

// shortArgs summarises a tool call's JSON arguments on one line: the value
// of the one telling field when there is one ("command", "query", …),
// else the compact JSON, cut to progressArgsMax characters.
func shortArgs(raw json.RawMessage) string {
	var s string
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err == nil {
		for _, k := range []string{"command", "cmd", "query", "path", "url", "name"} {
			if v, ok := obj[k].(string); ok {
				s = v
				break
			}
		}
		if s == "" && len(obj) > 0 {
			if b, err := json.Marshal(obj); err == nil {
				s = string(b)
			}
		}
	} else {
		s = string(raw)
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > progressArgsMax {
		s = string(r[:progressArgsMax-1]) + "…"
	}
	return s
}
