package discord

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bwmarrin/discordgo"
)

// GatewaySession is what another process needs to resume a gateway
// session: its id and the sequence number of the last event stored.
type GatewaySession struct {
	ID  string
	Seq int64
}

// SessionStore keeps the gateway session where the next replica to hold
// the gateway finds it. Epochs fence out a replica that lost the gateway
// but still saves: ClaimGatewaySession returns a new epoch, higher than
// every earlier one, and SaveGatewaySession ignores saves made with an
// epoch lower than the newest claimed.
type SessionStore interface {
	// ClaimGatewaySession starts a new epoch and returns it with the last
	// saved session (zero when there is none).
	ClaimGatewaySession(ctx context.Context) (s GatewaySession, epoch int64, err error)
	// SaveGatewaySession records s unless a newer epoch was claimed.
	SaveGatewaySession(ctx context.Context, epoch int64, s GatewaySession) error
}

// handoverSaveInterval is how often the session's progress is saved: a
// replica that takes over resumes at most this far back, and Discord
// replays those events again (the handler's durable dedupe drops them).
const handoverSaveInterval = time.Second

// resumableClose is the close code sent when Start stops while a
// SessionStore is set: anything but 1000 and 1001 keeps the session
// resumable, so the next replica (or this one, restarted) resumes it and
// Discord replays what was sent meanwhile.
const resumableClose = 4000

// handover tracks the gateway session's stored progress.
type handover struct {
	mu      sync.Mutex
	current string         // session id of the events being read
	handled GatewaySession // newest event the handler has stored
	saved   GatewaySession // last saved
	epoch   atomic.Int64   // 0: nothing claimed, do not save
	staged  event          // work of the event being read (reader goroutine)
	broken  bool           // an event was given up: progress stops there
}

// stage keeps the work a typed handler made of the event being read;
// onEvent, called right after on the same goroutine, queues it.
func (c *Channel) stage(ev event) {
	c.hand.mu.Lock()
	c.hand.staged = ev
	c.hand.mu.Unlock()
}

// onEvent runs for every dispatch, after the typed handlers: it queues the
// work they staged with the event's gateway position, recorded once the
// work succeeded (the event is stored), and notes the session id of READY.
func (c *Channel) onEvent(_ *discordgo.Session, e *discordgo.Event) {
	c.hand.mu.Lock()
	ev := c.hand.staged
	c.hand.staged = event{}
	if r, ok := e.Struct.(*discordgo.Ready); ok && r.SessionID != "" {
		c.hand.current = r.SessionID
	}
	if c.opts.Sessions != nil && e.Operation == 0 && e.Sequence != 0 && c.hand.current != "" {
		ev.mark = &GatewaySession{ID: c.hand.current, Seq: e.Sequence}
	}
	c.hand.mu.Unlock()
	if ev.run != nil || ev.mark != nil {
		c.enqueue(ev)
	}
}

// marked records that every event up to at is stored, unless an earlier
// event was given up.
func (c *Channel) marked(at GatewaySession) {
	c.hand.mu.Lock()
	defer c.hand.mu.Unlock()
	if !c.hand.broken {
		c.hand.handled = at
	}
}

// claimSession takes a new epoch and, when a session was saved, sets the
// discordgo session up to resume it on the next Open. Failing that, the
// gateway identifies afresh (events sent during the hand-over are then
// missed) and nothing is saved this time.
func (c *Channel) claimSession(ctx context.Context) {
	if c.opts.Sessions == nil {
		return
	}
	c.hand.mu.Lock()
	c.hand.broken = false
	c.hand.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, epoch, err := c.opts.Sessions.ClaimGatewaySession(ctx)
	if err != nil {
		c.hand.epoch.Store(0)
		c.log.Warn("discord gateway session store unavailable; identifying afresh (messages sent during the hand-over may be missed)", "error", err)
		return
	}
	c.hand.epoch.Store(epoch)
	c.hand.mu.Lock()
	c.hand.saved, c.hand.handled, c.hand.current, c.hand.broken = s, s, s.ID, false
	c.hand.mu.Unlock()
	if s.ID == "" {
		return
	}
	if err := setResumeState(c.sess, s.ID, s.Seq); err != nil {
		c.log.Warn("cannot resume the stored discord gateway session; identifying afresh", "error", err)
		return
	}
	c.log.Info("resuming the stored discord gateway session", "seq", s.Seq)
}

// saveSessions saves the handled progress every interval until ctx ends,
// then returns; Start saves once more after the queue has drained.
func (c *Channel) saveSessions(ctx context.Context) {
	t := time.NewTicker(handoverSaveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.saveSession(ctx)
		}
	}
}

// saveSession saves the handled progress when it moved.
func (c *Channel) saveSession(ctx context.Context) {
	epoch := c.hand.epoch.Load()
	if c.opts.Sessions == nil || epoch == 0 {
		return
	}
	c.hand.mu.Lock()
	s, saved := c.hand.handled, c.hand.saved
	c.hand.mu.Unlock()
	if s == saved || s.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.opts.Sessions.SaveGatewaySession(ctx, epoch, s); err != nil {
		c.log.Debug("discord gateway session not saved", "error", err)
		return
	}
	c.hand.mu.Lock()
	c.hand.saved = s
	c.hand.mu.Unlock()
}

// setResumeState makes sess's next Open resume session id after event seq
// instead of identifying. discordgo keeps both unexported and offers no
// way to resume a session another process opened, so they are set through
// reflection; a discordgo that renamed them yields an error (and a test
// fails), never a silent identify.
func setResumeState(sess *discordgo.Session, id string, seq int64) error {
	v := reflect.ValueOf(sess).Elem()
	idField, seqField := v.FieldByName("sessionID"), v.FieldByName("sequence")
	if !idField.IsValid() || idField.Kind() != reflect.String ||
		!seqField.IsValid() || seqField.Type() != reflect.TypeFor[*int64]() {
		return errors.New("this discordgo version keeps the gateway session differently")
	}
	reflect.NewAt(idField.Type(), unsafe.Pointer(idField.UnsafeAddr())).Elem().SetString(id)
	p := reflect.NewAt(seqField.Type(), unsafe.Pointer(seqField.UnsafeAddr())).Elem()
	if p.IsNil() {
		p.Set(reflect.ValueOf(new(int64)))
	}
	atomic.StoreInt64(p.Interface().(*int64), seq)
	return nil
}
