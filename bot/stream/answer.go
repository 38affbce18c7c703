package stream

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/progress"
	"github.com/switchboard-chat/switchboard/channels"
)

// DefaultEvery is the least time between two visible updates of one
// answer: about one a second, within every platform's per-chat limits.
const DefaultEvery = time.Second

// callTimeout bounds one platform call. The call is not cut short by the
// run ending: a message sent without its id known could never be replaced.
const callTimeout = 5 * time.Second

// Store records the live messages of each session's answer, so that a run
// that dies mid-answer leaves them to the next. PostgreSQL implements it;
// the outbox row that replaces them deletes the record with it.
type Store interface {
	// SaveLive records ids, in order, as the live messages of session's
	// answer at to.
	SaveLive(ctx context.Context, session string, to channels.Address, ids []string) error
	// LiveMessages returns the live messages a run of session left at to.
	LiveMessages(ctx context.Context, session string, to channels.Address) ([]string, error)
	// EndLive forgets session's live messages: they keep what they show.
	EndLive(ctx context.Context, session string) error
}

// Options say where an Answer shows.
type Options struct {
	// Session is the run's session; To its chat, shown by Channel.
	Session string
	To      channels.Address
	Channel channels.LiveAnswerer
	// ReplyTo is the message the first answer replies to; Asker is the
	// platform user id of the person who asked.
	ReplyTo string
	Asker   string
	// Store records the live messages; nil keeps them in memory only.
	Store Store
	// Every is the least time between visible updates; DefaultEvery when
	// zero.
	Every time.Duration
	// Scrub removes secrets from the text shown; nil shows it as it is.
	Scrub func(string) string
	// Log receives the platform's refusals, at debug level.
	Log *slog.Logger
}

// Answer shows one run's answers as they are written. A nil *Answer shows
// nothing (the chat cannot, or streaming is off); its methods do nothing.
type Answer struct {
	o   Options
	ctx context.Context

	mu       sync.Mutex
	text     string // the model's current reply so far
	step     string // the running tool step's line
	stepLast bool   // step came after text: the next text is a new call's
	finished bool   // Finish was called: nothing more is shown
	loop     *loop  // the running update loop, if any

	// Owned by the loop while it runs, else under mu.
	ids    []string // the live messages, in order
	shown  []string // what each shows
	loaded bool     // ids holds what a dead run left (Store)
}

// Start returns an Answer for a run in o.To, or nil when o.Channel is nil.
// Nothing is shown before the first Text or Step.
func Start(ctx context.Context, o Options) *Answer {
	if o.Channel == nil {
		return nil
	}
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Answer{o: o, ctx: ctx, loaded: o.Store == nil}
}

// Text shows soFar, the model's reply so far (agentcore.RunInput.OnText).
// It never blocks on the platform.
func (a *Answer) Text(soFar string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stepLast {
		a.step, a.stepLast = "", false // a new model call after the tools
	}
	a.text = soFar
	a.wakeLocked()
}

// Step shows the tool call about to run as a line at the answer's end.
func (a *Answer) Step(c agentcore.ToolCall) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.step, a.stepLast = "🔧 "+progress.StepLine(c)+"…", true
	a.wakeLocked()
}

// Finish stops showing the answer — waiting for an update under way — and
// returns the live messages the final reply must replace (none when
// nothing was shown). Until Handed, later calls return the same.
func (a *Answer) Finish(ctx context.Context) []string {
	if a == nil {
		return nil
	}
	a.halt()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.loadLocked(ctx)
	return append([]string(nil), a.ids...)
}

// halt stops the updates and waits for the one under way.
func (a *Answer) halt() {
	a.mu.Lock()
	a.finished = true
	l := a.loop
	a.loop = nil
	a.mu.Unlock()
	if l != nil {
		l.stop()
	}
}

// Said returns what the model has written of the current answer so far,
// as the chat is shown it (whole words, scrubbed), without the step line:
// what a stopped answer keeps.
func (a *Answer) Said() string {
	if a == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.o.Scrub(wholeWords(a.text))
}

// Handed says the reply replacing the live messages Finish returned is
// stored: the run's next answer, if any, starts afresh in new messages,
// replying to nothing.
func (a *Answer) Handed() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.text, a.step, a.stepLast, a.finished = "", "", false, false
	a.ids, a.shown, a.loaded = nil, nil, true
	a.o.ReplyTo = ""
}

// Stop ends the answer's updates at the end of the run, leaving the live
// messages as they are: an interrupted run's next run takes them over. It
// is safe to call more than once.
func (a *Answer) Stop() {
	if a != nil {
		a.halt()
	}
}

// Leave ends the answer with what the model said so far and note in
// place of the tool step, and the session's next answer comes in new
// messages. A run that parks on an approval leaves its answer so: what it
// said before asking stays above the request, saying it waits, and the
// answer after the decision comes below. The live messages are edited
// once, not through the outbox: an edit lost to a crash or a 429 leaves
// the step line, which the approval request below explains.
func (a *Answer) Leave(ctx context.Context, note string) {
	if a == nil {
		return
	}
	ids := a.Finish(ctx)
	if len(ids) == 0 {
		a.Handed()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	text := a.Said()
	if text != "" {
		text += "\n\n"
	}
	want := chunks(text+note, a.o.Channel.LiveLimit())
	for i, id := range ids {
		if i >= len(want) || a.shown[i] == want[i] {
			continue
		}
		if err := a.o.Channel.UpdateLive(ctx, a.o.To, id, want[i]); err != nil {
			a.o.Log.Debug("left answer not edited", "err", err)
			break
		}
	}
	if a.o.Store != nil {
		if err := a.o.Store.EndLive(ctx, a.o.Session); err != nil {
			a.o.Log.Warn("live answer not ended; the next answer may replace it", "err", err)
		}
	}
	a.Handed()
}

// wakeLocked has the loop show the latest text, starting it if needed.
func (a *Answer) wakeLocked() {
	if a.finished {
		return
	}
	if a.loop == nil {
		a.loop = startLoop(a)
	}
	a.loop.wake()
}

// loadLocked takes over the live messages a dead run of the session left,
// once.
func (a *Answer) loadLocked(ctx context.Context) {
	if a.loaded {
		return
	}
	a.loaded = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	ids, err := a.o.Store.LiveMessages(ctx, a.o.Session, a.o.To)
	if err != nil {
		a.o.Log.Warn("live answer of an earlier run not read; it may stay half-written", "err", err)
		return
	}
	a.ids = ids
	a.shown = make([]string, len(ids)) // unknown: updated first
	for i := range a.shown {
		a.shown[i] = "\x00"
	}
}

// wanted is the live text now: the reply so far up to its last whole
// word, and the step line, scrubbed. Whole words only, so that Scrub sees
// a secret the model writes whole, never a head of it it cannot know.
func (a *Answer) wanted() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	text := wholeWords(a.text)
	if a.step != "" {
		if text != "" {
			text += "\n\n"
		}
		text += a.step
	}
	return a.o.Scrub(text)
}

// wholeWords is text without the word still being written (after its
// last space or line break), and without trailing space.
func wholeWords(text string) string {
	i := strings.LastIndexAny(text, " \n\t")
	if i < 0 {
		return ""
	}
	return strings.TrimRight(text[:i], " \n\t")
}
