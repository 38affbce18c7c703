package bot_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// beatLog records a Liveness's heartbeat calls in order; the first
// failEnds EndHeartbeat calls fail.
type beatLog struct {
	mu       sync.Mutex
	events   []string
	failEnds int
}

func (b *beatLog) Heartbeat(context.Context, string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, "beat")
	return nil
}

func (b *beatLog) EndHeartbeat(context.Context, string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failEnds > 0 {
		b.failEnds--
		b.events = append(b.events, "end failed")
		return errors.New("connection refused")
	}
	b.events = append(b.events, "end")
	return nil
}

func (b *beatLog) since(i int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.events[i:]...)
}

// A Liveness makes no heartbeat while nothing is held, beats from the
// first Hold on, ends the heartbeat once the last Release is Linger old
// and then stops; an end that fails is retried, the heartbeat kept fresh
// in between.
func TestLivenessBeatsOnlyWhileHeld(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &beatLog{}
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: 10 * time.Millisecond, Linger: 30 * time.Millisecond})
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	time.Sleep(100 * time.Millisecond) // ten intervals
	if got := store.since(0); len(got) != 0 {
		t.Fatalf("nothing held, yet %q", got)
	}

	live.Hold()
	live.Hold()
	bot.WaitUntil(t, "three beats", func() bool { return len(store.since(0)) >= 3 })
	live.Release()
	time.Sleep(50 * time.Millisecond) // past Linger with one hold left
	live.Release()
	bot.WaitUntil(t, "the heartbeat ends", func() bool { return slices.Contains(store.since(0), "end") })
	ended := store.since(0)
	if i := slices.Index(ended, "end"); i != len(ended)-1 || slices.ContainsFunc(ended[:i], func(e string) bool { return e != "beat" }) {
		t.Fatalf("events %q; want beats, then one end", ended)
	}
	time.Sleep(100 * time.Millisecond)
	if got := store.since(len(ended)); len(got) != 0 {
		t.Fatalf("after the end: %q; want nothing", got)
	}

	store.mu.Lock()
	store.failEnds = 2
	store.mu.Unlock()
	live.Hold()
	bot.WaitUntil(t, "a beat", func() bool { return len(store.since(len(ended))) > 0 })
	live.Release()
	bot.WaitUntil(t, "the heartbeat ends again", func() bool { return slices.Contains(store.since(len(ended)), "end") })
	got := store.since(len(ended))
	if got[0] != "beat" || got[len(got)-1] != "end" {
		t.Fatalf("second hold: %q; want a beat first and the end last", got)
	}
	for i, e := range got {
		if e == "end failed" && got[i+1] != "beat" {
			t.Fatalf("second hold: %q; want a beat after each failed end", got)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(got), func(e string) bool { return e != "end failed" })); n != 2 {
		t.Fatalf("second hold: %q; want two failed ends", got)
	}
}

// gatedBeats passes heartbeats to a store, but holds each Heartbeat while
// gate is set, and counts EndHeartbeat calls that succeeded.
type gatedBeats struct {
	bot.Heartbeats
	mu    sync.Mutex
	gate  chan struct{}
	ended int
}

func (g *gatedBeats) Heartbeat(ctx context.Context, owner string) error {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Heartbeats.Heartbeat(ctx, owner)
}

func (g *gatedBeats) EndHeartbeat(ctx context.Context, owner string) error {
	err := g.Heartbeats.EndHeartbeat(ctx, owner)
	if err == nil {
		g.mu.Lock()
		g.ended++
		g.mu.Unlock()
	}
	return err
}

func (g *gatedBeats) endings() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended
}

// heldChat holds its sends to chat "held" until release is closed and
// records every send.
type heldChat struct {
	entered, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	sent             []string
}

func (c *heldChat) Platform() string { return "test" }

func (c *heldChat) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (c *heldChat) Send(ctx context.Context, m channels.Outbound) (string, error) {
	if m.To.ChatID == "held" {
		c.once.Do(func() { close(c.entered) })
		select {
		case <-c.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, m.Text)
	return m.Text, nil
}

func (c *heldChat) delivered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}

// A replica that went idle leaves no heartbeat that could go stale, so a
// row it claims after a long idle, while its first new heartbeat is still
// on its way, is not taken by another replica: that one waits for the
// lease. (A heartbeat left behind by the first delivery would be minutes
// old by then and void the claim at once.)
func TestDispatcherClaimAfterIdleIsNotTakenOver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	beats := &gatedBeats{Heartbeats: db}
	live := bot.NewLiveness(bot.LivenessOptions{Store: beats, Owner: "a", Interval: 50 * time.Millisecond, Linger: 50 * time.Millisecond})
	chA := &heldChat{entered: make(chan struct{}), release: make(chan struct{})}
	dispA := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{"test": chA},
		Owner: "a", Liveness: live, Poll: 50 * time.Millisecond})
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() { live.Run(ctx) })
	wg.Go(func() { dispA.Run(ctx) })

	enqueue := func(chat, text string) {
		t.Helper()
		if _, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: chat}, Text: text}); err != nil {
			t.Fatal(err)
		}
		dispA.Nudge()
	}
	enqueue("c1", "first")
	bot.WaitUntil(t, "the first row is delivered", func() bool { return len(chA.delivered()) == 1 })
	bot.WaitUntil(t, "a's heartbeat ends after its last delivery", func() bool { return beats.endings() > 0 })
	// Minutes pass: any heartbeat of a's still stored goes stale.
	if _, err := db.Pool().Exec(ctx, `UPDATE replicas SET seen_at = now() - interval '10 minutes'`); err != nil {
		t.Fatal(err)
	}

	beats.mu.Lock()
	beats.gate = make(chan struct{}) // a's next heartbeat is slow to arrive
	beats.mu.Unlock()
	enqueue("held", "second")
	select {
	case <-chA.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("a did not start sending the second row")
	}
	chB := &heldChat{entered: make(chan struct{}), release: make(chan struct{})}
	dispB := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{"test": chB},
		Owner: "b", Poll: 20 * time.Millisecond})
	wg.Go(func() { dispB.Run(ctx) })
	time.Sleep(500 * time.Millisecond) // b polls about 25 times
	select {
	case <-chB.entered:
		t.Fatal("b took the row a is sending: a's claim was void while its heartbeat was on its way")
	default:
	}
	close(beats.gate)
	close(chA.release)
	bot.WaitUntil(t, "a delivers the second row", func() bool { return len(chA.delivered()) == 2 })
	if got := chB.delivered(); len(got) != 0 {
		t.Fatalf("b sent %q; want nothing", got)
	}
}

// Cover, called before a claim while holding, leaves a heartbeat behind
// before it returns whenever there may be none (never begun, or ended
// after an idle spell), so a process that dies right after the claim has
// its work taken over at once; while the heartbeat goes on it writes
// nothing itself.
func TestCoverBeatsBeforeAClaim(t *testing.T) {
	store := &beatLog{}
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: 10 * time.Millisecond, Linger: 30 * time.Millisecond})
	holdCovered := func() { live.Hold(); live.Cover(context.Background()) }

	// Run is not running yet: only Cover itself can have beaten.
	holdCovered()
	if got := store.since(0); !slices.Equal(got, []string{"beat"}) {
		t.Fatalf("before the first claim: %q; want one beat", got)
	}
	holdCovered() // the heartbeat is there: nothing more
	if got := store.since(0); len(got) != 1 {
		t.Fatalf("a second hold while beating: %q; want no new statement", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	live.Release()
	live.Release()
	bot.WaitUntil(t, "the heartbeat ends", func() bool { return slices.Contains(store.since(0), "end") })
	time.Sleep(50 * time.Millisecond) // Run waits for a hold now
	ended := len(store.since(0))
	holdCovered()
	if got := store.since(ended); len(got) == 0 || got[0] != "beat" {
		t.Fatalf("a claim after the heartbeat ended: %q right after Cover; want a beat first", got)
	}
	live.Release()
}

// A dispatcher never holds a claimed row while its replica has no
// heartbeat stored, not even until its Liveness's first beat (here the
// Liveness never runs, so only the claims themselves can have beaten): a
// claim that finds rows writes the heartbeat in its own statement, and a
// row written already claimed is preceded by one. Another replica then
// takes the row over at once should this one die right after the claim.
// Polls that claim nothing write no heartbeat.
func TestDispatcherClaimsOnlyUnderAHeartbeat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	heartbeats := func() int {
		t.Helper()
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM replicas WHERE owner = 'a'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	out := &countingOutbox{DB: db}
	ch := &gatedChannel{gate: make(chan struct{}), entered: make(chan struct{})}
	// start runs a dispatcher whose Liveness never runs.
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	start := func() (*bot.Dispatcher, *bot.Liveness) {
		live := bot.NewLiveness(bot.LivenessOptions{Store: db, Owner: "a"})
		disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: out, Channels: map[string]channels.Channel{"test": ch},
			Owner: "a", Liveness: live, Poll: 20 * time.Millisecond})
		running.Go(func() { disp.Run(ctx) })
		return disp, live
	}
	disp, live := start()

	bot.WaitUntil(t, "a few idle polls", func() bool { return out.claims.Load() >= 5 })
	if n := heartbeats(); n != 0 {
		t.Fatalf("idle polls wrote %d heartbeats; want none", n)
	}
	if _, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: "c1"}, Text: "polled"}); err != nil {
		t.Fatal(err)
	}
	disp.Nudge()
	bot.WaitUntil(t, "the polled row is delivered", func() bool { return len(ch.delivered()) == 1 })
	if n := heartbeats(); n != 1 {
		t.Fatalf("a poll claimed a row with no heartbeat stored, and left %d heartbeats; want 1, written with the claim", n)
	}
	covered := live.Pin()
	live.Unpin()
	if !covered {
		t.Fatal("after a claim that wrote the heartbeat the Liveness counts none stored; want it counted, so Run does not write it again at once")
	}

	// A row written already claimed, by a dispatcher with no heartbeat
	// stored.
	if _, err := db.Pool().Exec(ctx, `DELETE FROM replicas`); err != nil {
		t.Fatal(err)
	}
	disp, _ = start()
	var claim bot.Claim
	bot.WaitUntil(t, "the dispatcher takes rows", func() bool {
		var ok bool
		claim, ok = disp.ReserveForTest()
		return ok
	})
	if n := heartbeats(); n != 1 {
		t.Fatalf("room for a row written claimed was given with %d heartbeats stored; want 1, written first", n)
	}
	row, claimed, err := db.EnqueueClaimed(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: "c2"}, Text: "handed over"}, claim)
	if err != nil {
		t.Fatal(err)
	}
	disp.HandOverForTest(row, claimed)
	bot.WaitUntil(t, "the row written claimed is delivered", func() bool { return len(ch.delivered()) == 2 })
}

// Pin keeps the heartbeat from ending while a claim is under way, without
// beating for it, and tells the claim whether a heartbeat is stored.
func TestLivenessPinKeepsTheHeartbeatFromEnding(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &beatLog{}
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: 10 * time.Millisecond, Linger: 30 * time.Millisecond})
	if live.Pin() {
		t.Fatal("Pin before any beat reports a heartbeat stored")
	}
	live.Unpin()
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	live.Hold()
	bot.WaitUntil(t, "the first beat", func() bool { return len(store.since(0)) > 0 })
	if !live.Pin() {
		t.Fatal("Pin while beating reports no heartbeat stored")
	}
	live.Release()
	time.Sleep(150 * time.Millisecond) // five Lingers
	if got := store.since(0); slices.Contains(got, "end") {
		t.Fatalf("the heartbeat ended while pinned: %q", got)
	}
	live.Unpin()
	bot.WaitUntil(t, "the heartbeat ends once unpinned", func() bool { return slices.Contains(store.since(0), "end") })
	if live.Pin() {
		t.Fatal("Pin after the heartbeat ended reports one stored")
	}
	live.Unpin()
}

// stuckBeats is a heartbeat store that answers nothing, like a PostgreSQL
// that is down: each Heartbeat waits for its caller to give up.
type stuckBeats struct{ calls atomic.Int32 }

func (s *stuckBeats) Heartbeat(ctx context.Context, _ string) error {
	s.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func (s *stuckBeats) EndHeartbeat(context.Context, string) error { return nil }

// While the heartbeat store is down, Cover gives up after an Interval and
// the claims go ahead on their leases; replies that need a Cover meanwhile
// do not each wait for a beat of their own in turn.
func TestCoverGivesUpWhileTheStoreIsDown(t *testing.T) {
	store := &stuckBeats{}
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: 200 * time.Millisecond})
	const replies = 20
	var wg sync.WaitGroup
	for range replies {
		live.Hold()
		wg.Go(func() { live.Cover(context.Background()) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d Covers still wait for a store that is down, after %d heartbeats", replies, store.calls.Load())
	}
	if n := store.calls.Load(); n >= replies/2 {
		t.Fatalf("%d replies made %d heartbeat attempts in turn while the store was down; want one or two", replies, n)
	}
}

// gatedEnds is a heartbeat store whose EndHeartbeat waits for gate once
// it has said it began (ending).
type gatedEnds struct {
	beatLog
	ending, gate chan struct{}
}

func (g *gatedEnds) EndHeartbeat(ctx context.Context, owner string) error {
	close(g.ending)
	<-g.gate
	return g.beatLog.EndHeartbeat(ctx, owner)
}

// A claim pinned while the heartbeat is being ended waits for the delete:
// the claim writes a heartbeat of its own (none is stored), and a delete
// that came after it would remove it.
func TestLivenessPinWaitsForAnEndUnderWay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &gatedEnds{ending: make(chan struct{}), gate: make(chan struct{})}
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: 10 * time.Millisecond, Linger: 30 * time.Millisecond})
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	var open sync.Once
	openGate := func() { open.Do(func() { close(store.gate) }) }
	defer func() { openGate(); cancel(); <-done }()

	live.Hold()
	live.Release()
	<-store.ending // Run has decided to end the heartbeat; its delete waits
	pinned := make(chan bool, 1)
	go func() { pinned <- live.Pin() }()
	select {
	case covered := <-pinned:
		t.Fatalf("Pin returned (covered %v) while the end was still under way; want it to wait for the delete", covered)
	case <-time.After(100 * time.Millisecond):
	}
	openGate()
	if covered := <-pinned; covered {
		t.Fatal("Pin after the end reports a heartbeat stored")
	}
	live.Unpin()
}

// beatTimes records when each heartbeat was written.
type beatTimes struct {
	mu    sync.Mutex
	beats []time.Time
}

func (b *beatTimes) Heartbeat(context.Context, string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.beats = append(b.beats, time.Now())
	return nil
}

func (b *beatTimes) EndHeartbeat(context.Context, string) error { return nil }

func (b *beatTimes) times() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.beats...)
}

// The heartbeat Cover writes for the first claim after an idle spell is
// not written again at once by Run, woken by the same hold.
func TestLivenessDoesNotBeatTwiceAfterCover(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &beatTimes{}
	const interval = 400 * time.Millisecond
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: interval})
	live.Hold() // wakes Run once it runs
	live.Cover(ctx)
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	bot.WaitUntil(t, "the next beat", func() bool { return len(store.times()) >= 2 })
	got := store.times()
	if gap := got[1].Sub(got[0]); gap < interval/2 {
		t.Fatalf("Run beat %v after Cover's beat; want no beat within half an Interval of it", gap)
	}
	live.Release()
}

// A claim that wrote the heartbeat in its own statement (Beaten) is not
// followed at once by Run's beat, woken by the claim's Hold: the next beat
// comes about an Interval later.
func TestLivenessDoesNotBeatAgainAfterAClaimBeat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &beatTimes{}
	const interval = 400 * time.Millisecond
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: interval})
	if live.Pin() {
		t.Fatal("Pin before any beat reports a heartbeat stored")
	}
	claimed := time.Now() // the claim's statement wrote the heartbeat
	live.Beaten()
	live.Hold()
	live.Unpin()
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	bot.WaitUntil(t, "Run's first beat", func() bool { return len(store.times()) >= 1 })
	if gap := store.times()[0].Sub(claimed); gap < interval/2 {
		t.Fatalf("Run beat %v after the claim wrote the heartbeat; want no beat within half an Interval of it", gap)
	}
	live.Release()
}

// heldBeats answers a Liveness's first heartbeat and holds every later
// one until release is closed, saying when the first is held (entered).
type heldBeats struct {
	beatLog
	calls            atomic.Int32
	enter            sync.Once
	entered, release chan struct{}
}

func (h *heldBeats) Heartbeat(ctx context.Context, owner string) error {
	if h.calls.Add(1) > 1 {
		h.enter.Do(func() { close(h.entered) })
		select {
		case <-h.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return h.beatLog.Heartbeat(ctx, owner)
}

// While a heartbeat is stored, Pin does not wait for a beat under way: the
// dispatcher's claims do not queue behind heartbeat round trips.
func TestLivenessPinDoesNotWaitForABeat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &heldBeats{entered: make(chan struct{}), release: make(chan struct{})}
	live := bot.NewLiveness(bot.LivenessOptions{Store: store, Owner: "a", Interval: 20 * time.Millisecond})
	live.Hold()
	live.Cover(ctx) // the first beat: a heartbeat is stored
	done := make(chan struct{})
	go func() { live.Run(ctx); close(done) }()
	defer func() { close(store.release); cancel(); <-done }()
	<-store.entered // Run's next beat is under way and holds the store
	pinned := make(chan bool, 1)
	go func() { pinned <- live.Pin() }()
	select {
	case covered := <-pinned:
		if !covered {
			t.Fatal("Pin while a heartbeat is stored reports none")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pin still waits for a beat under way 5s later; want it to return at once while a heartbeat is stored")
	}
	live.Unpin()
	live.Release()
}
