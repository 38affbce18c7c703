package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
	"github.com/switchboard-chat/switchboard/tools"
)

// The load the pipeline benchmarks put on: b.N messages spread over
// benchChats private chats (one user each), after benchWarmup messages on
// other chats that are not measured.
const (
	benchChats   = 200
	benchWarmup  = 100
	benchToken   = "123456:BENCH-token-for-the-fake-api"
	stallTimeout = 30 * time.Second
)

// BenchmarkPipeline measures the whole path: the Telegram Bot API fake ←
// channels/telegram (long polling, go-telegram/bot) → bot.Router → Postgres
// and Redis → agent with a zero-latency provider → outbox → bot.Dispatcher
// → Telegram sendMessage → fake. A message's latency runs from the moment
// the fake queues its update to the moment the fake has answered the
// sendMessage carrying its reply. "inflight=1" sends the next message only
// after the previous reply (the per-message overhead); "inflight=200" keeps
// one unanswered message in each of 200 chats (the throughput).
func BenchmarkPipeline(b *testing.B) {
	for _, inflight := range []int{1, benchChats} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) { benchTelegram(b, inflight) })
	}
}

// BenchmarkRouterDirect is BenchmarkPipeline without Telegram: Router.Handle
// is called directly, one message at a time as the Telegram adapter does,
// and replies go to an in-memory channel. It isolates the cost of the
// pipeline (Redis, Postgres, lanes, outbox) from HTTP and long polling.
// "handlers=8" calls Handle from 8 goroutines at once (still one message
// per chat at a time), to show what handling different chats in parallel
// would give; "pool=24" raises the Postgres pool from pgx's default
// (max(4, CPUs), what the daemon uses) to 24 connections.
func BenchmarkRouterDirect(b *testing.B) {
	for _, c := range []struct {
		inflight, handlers int
		pool               int32
	}{
		{1, 1, 0}, {benchChats, 1, 0}, {benchChats, 8, 0}, {benchChats, 8, 24},
	} {
		name := fmt.Sprintf("inflight=%d", c.inflight)
		if c.handlers > 1 {
			name += fmt.Sprintf(",handlers=%d", c.handlers)
		}
		if c.pool > 0 {
			name += fmt.Sprintf(",pool=%d", c.pool)
		}
		b.Run(name, func(b *testing.B) { benchDirect(b, c.inflight, c.handlers, c.pool) })
	}
}

func benchTelegram(b *testing.B, inflight int) {
	env := newBenchEnv(b)
	fake := telegramtest.NewServer(benchToken)
	b.Cleanup(fake.Close)
	tg, err := telegram.New(telegram.Options{Token: benchToken, APIURL: fake.URL(), Logger: env.log})
	if err != nil {
		b.Fatal(err)
	}
	ch := &timedTelegram{Channel: tg, env: env}
	env.start(b, ch, 0)
	env.spawn(func(ctx context.Context) {
		if err := tg.Start(ctx, env.handle); err != nil {
			b.Errorf("telegram stopped: %v", err)
		}
	})
	for deadline := time.Now().Add(15 * time.Second); tg.Ready(context.Background()) != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("telegram channel not ready: %v", tg.Ready(context.Background()))
		}
	}
	total := env.measure(b, inflight, func(idx int, chat int64) {
		fake.SendText(chat, chat, "User "+strconv.FormatInt(chat, 10), "m"+strconv.Itoa(idx))
	})
	sent := 0
	for _, chat := range append(chatRange(warmupChatBase, benchWarmup), chatRange(1, benchChats)...) {
		sent += len(fake.Messages(chat))
	}
	if sent != total {
		b.Fatalf("the fake received %d replies, want %d (one per message)", sent, total)
	}
}

func benchDirect(b *testing.B, inflight, handlers int, pool int32) {
	env := newBenchEnv(b)
	ch := &sinkChannel{env: env}
	env.start(b, ch, pool)
	send := func(idx int, chat int64) {
		id := strconv.FormatInt(chat, 10)
		env.handle(context.Background(), channels.Inbound{
			Platform: ch.Platform(), ChatID: id, UserID: id, UserName: "User " + id,
			Text: "m" + strconv.Itoa(idx), Direct: true, MessageID: strconv.Itoa(idx),
			ExternalID: strconv.Itoa(idx),
		})
	}
	if handlers > 1 {
		work := make(chan func(), inflight)
		b.Cleanup(func() { close(work) }) // runs before env's cleanup
		for range handlers {
			go func() {
				for f := range work {
					f()
				}
			}()
		}
		direct := send
		send = func(idx int, chat int64) { work <- func() { direct(idx, chat) } }
	}
	env.measure(b, inflight, send)
}

// zeroProvider answers instantly with the newest user message, so the
// benchmark measures switchboard and not a model.
type zeroProvider struct{}

func (zeroProvider) Name() string { return "zero" }

func (zeroProvider) Chat(_ context.Context, req agentcore.Request, _ func(string)) (agentcore.Response, error) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agentcore.RoleUser {
			return agentcore.Response{Content: req.Messages[i].Content, StopReason: "stop"}, nil
		}
	}
	return agentcore.Response{}, fmt.Errorf("zero provider: no user message in %d messages", len(req.Messages))
}

// benchEnv is one wired pipeline on the real Postgres and Redis, plus the
// bookkeeping of the load it is under.
type benchEnv struct {
	log    *slog.Logger
	ops    *opTimer
	db     *postgres.DB
	router *bot.Router
	ctx    context.Context
	wg     sync.WaitGroup

	start0    []time.Time     // by message index: when it was sent
	end       []time.Time     // when its reply was delivered
	handleDur []time.Duration // how long Router.Handle took on it
	seen      []atomic.Bool
	handled   sync.WaitGroup // one count per message until Handle returned
	done      chan int       // message indexes as replies arrive; -1: unexpected reply
	mu        sync.Mutex
	odd       []string // replies that answer no message
}

func newBenchEnv(b *testing.B) *benchEnv {
	ctx, cancel := context.WithCancel(context.Background())
	e := &benchEnv{
		// The daemon's default: info level, text format (here discarded).
		log: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
		ops: &opTimer{ops: map[string]*opStat{}},
		ctx: ctx,
	}
	b.Cleanup(func() {
		if e.router != nil {
			closeCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
			_ = e.router.Close(closeCtx)
			stop()
		}
		cancel()
		e.wg.Wait()
	})
	return e
}

// spawn runs f until the benchmark's cleanup cancels its context.
func (e *benchEnv) spawn(f func(ctx context.Context)) {
	e.wg.Add(1)
	go func() { defer e.wg.Done(); f(e.ctx) }()
}

// start wires Router and Dispatcher as cmd/switchboard does (default lanes,
// outbox batch and poll, rate limits off, open access) around ch, with every
// store call on the message path timed. pool > 0 sets the Postgres pool size.
func (e *benchEnv) start(b *testing.B, ch channels.Channel, pool int32) {
	db, err := postgres.Open(e.ctx, pgtest.New(b), postgres.Options{MaxConns: pool})
	if err != nil {
		b.Fatalf("postgres: %v", err)
	}
	b.Cleanup(db.Close)
	if err := postgres.Migrate(e.ctx, db); err != nil {
		b.Fatalf("migrate: %v", err)
	}
	e.db = db
	rdb, err := redis.Open(e.ctx, redistest.URL(b), redis.Options{Prefix: redistest.Prefix(b)})
	if err != nil {
		b.Fatalf("redis: %v", err)
	}
	b.Cleanup(func() { _ = rdb.Close() })
	reg := tools.NewRegistry(tools.RegistryOptions{})
	if err := reg.Register(tools.Datetime{}); err != nil {
		b.Fatal(err)
	}
	agent := &agentcore.Agent{
		Name: "default", Model: "zero", Provider: zeroProvider{}, Tools: reg,
		History:       timedDB{DB: db, ops: e.ops, who: "agent"},
		MaxIterations: agentcore.DefaultMaxIterations, HistoryLimit: 50, Logger: e.log,
	}
	metrics := bot.NewMetrics(nil)
	chans := map[string]channels.Channel{ch.Platform(): ch}
	tdb, trdb := timedDB{DB: db, ops: e.ops, who: "router"}, timedRedis{Store: rdb, ops: e.ops}
	disp := bot.NewDispatcher(bot.DispatcherOptions{
		Outbox: tdb, Channels: chans, Owner: "bench", Metrics: metrics, Logger: e.log,
	})
	e.router = bot.NewRouter(bot.Options{
		Agent: agent, AgentName: "default",
		History: tdb, Outbox: tdb, Recovery: db, Identities: db,
		Dedupe: trdb, Notice: rdb, Limiter: rdb, Locker: trdb,
		Channels: chans, Access: bot.AccessOptions{Mode: bot.AccessModeOpen},
		Metrics: metrics, Logger: e.log, Dispatcher: disp,
	})
	e.spawn(disp.Run)
	e.spawn(func(ctx context.Context) { e.router.RunRecovery(ctx, 30*time.Second) })
}

// handle is the channel's handler: Router.Handle, timed per message.
func (e *benchEnv) handle(ctx context.Context, in channels.Inbound) error {
	t0 := time.Now()
	err := e.router.Handle(ctx, in)
	if idx, ok := e.index(in.Text); ok && err == nil {
		e.handleDur[idx] = time.Since(t0)
		e.handled.Done()
	}
	return err
}

// delivered records that the reply with text reached the chat platform.
func (e *benchEnv) delivered(text string) {
	now := time.Now()
	idx, ok := e.index(text)
	if !ok || e.seen[idx].Swap(true) {
		e.mu.Lock()
		e.odd = append(e.odd, text)
		e.mu.Unlock()
		select {
		case e.done <- -1:
		default:
		}
		return
	}
	e.end[idx] = now
	e.done <- idx
}

// index parses "m<index>", the text of a message and of its echoed reply.
func (e *benchEnv) index(text string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(text, "m"))
	if err != nil || !strings.HasPrefix(text, "m") || n < 0 || n >= len(e.end) {
		return 0, false
	}
	return n, true
}

// Warm-up chats are numbered from here, away from the measured 1…benchChats.
const warmupChatBase = 1_000_000

// measure sends benchWarmup messages, then b.N measured ones with at most
// inflight unanswered, and reports throughput and latency percentiles. It
// returns how many messages it sent.
func (e *benchEnv) measure(b *testing.B, inflight int, send func(idx int, chat int64)) int {
	total := benchWarmup + b.N
	e.expect(total)

	e.drive(b, 0, benchWarmup, 16, chatRange(warmupChatBase, benchWarmup), send)
	e.ops.reset()
	pool0, cpu0 := e.db.Pool().Stat(), cpuTime(b)
	pg0, pgLocal := serverCPU("postgres")
	rd0, rdLocal := serverCPU("redis-server")
	b.ResetTimer()
	elapsed := e.drive(b, benchWarmup, b.N, inflight, chatRange(1, benchChats), send)
	b.StopTimer()
	e.handled.Wait() // a reply can arrive before Handle returns
	pool1, cpu1 := e.db.Pool().Stat(), cpuTime(b)
	pg1, _ := serverCPU("postgres")
	rd1, _ := serverCPU("redis-server")

	lat := make([]time.Duration, 0, b.N)
	hnd := make([]time.Duration, 0, b.N)
	for i := benchWarmup; i < total; i++ {
		lat = append(lat, e.end[i].Sub(e.start0[i]))
		hnd = append(hnd, e.handleDur[i])
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(ms(percentile(lat, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(hnd, 0.50)), "handle-p50-ms")
	b.ReportMetric(ms(percentile(hnd, 0.99)), "handle-p99-ms")
	// CPU of this whole process (pipeline, and for BenchmarkPipeline also
	// the Telegram fake and client); Postgres and Redis are not included.
	b.ReportMetric(ms(cpu1-cpu0)/float64(b.N), "cpu-ms/msg")
	// The servers' CPU, when they run on this machine (in 10 ms ticks: use
	// a few thousand messages), so the figures say what the whole pipeline
	// costs; nothing else should use them meanwhile.
	if pgLocal {
		b.ReportMetric(ms(pg1-pg0)/float64(b.N), "pg-cpu-ms/msg")
	}
	if rdLocal {
		b.ReportMetric(ms(rd1-rd0)/float64(b.N), "redis-cpu-ms/msg")
	}
	waited := pool1.EmptyAcquireCount() - pool0.EmptyAcquireCount()
	acquires := pool1.AcquireCount() - pool0.AcquireCount()
	poolWait := pool1.EmptyAcquireWaitTime() - pool0.EmptyAcquireWaitTime()
	b.ReportMetric(ms(poolWait)/float64(b.N), "pool-wait-ms/msg")
	if b.N >= 100 {
		e.ops.report(b, b.N)
		b.Logf("postgres pool (max %d conns): %.2f acquires/msg, %.0f%% waited for a free connection, %.3f ms waiting/msg",
			pool1.MaxConns(), float64(acquires)/float64(b.N), 100*float64(waited)/float64(max(acquires, 1)),
			ms(poolWait)/float64(b.N))
	}
	return total
}

// expect makes room to track total messages, numbered from 0.
func (e *benchEnv) expect(total int) {
	e.start0 = make([]time.Time, total)
	e.end = make([]time.Time, total)
	e.handleDur = make([]time.Duration, total)
	e.seen = make([]atomic.Bool, total)
	e.done = make(chan int, total+1)
	e.handled.Add(total)
}

// drive sends n messages numbered first… over chats, at most one
// unanswered per chat and inflight in all, and waits for every reply.
func (e *benchEnv) drive(b *testing.B, first, n, inflight int, chats []int64, send func(int, int64)) time.Duration {
	free := slices.Clone(chats)
	chatOf := make([]int64, n)
	next := first
	launch := func() {
		chat := free[0]
		free = free[1:]
		chatOf[next-first] = chat
		e.start0[next] = time.Now()
		idx := next
		next++
		send(idx, chat)
	}
	began := time.Now()
	for next < first+n && len(free) > 0 && next-first < inflight {
		launch()
	}
	stall := time.NewTimer(stallTimeout)
	defer stall.Stop()
	for got := 0; got < n; {
		select {
		case idx := <-e.done:
			if idx < 0 {
				e.mu.Lock()
				odd := slices.Clone(e.odd)
				e.mu.Unlock()
				b.Fatalf("replies that answer no message (or answer one twice): %q", odd)
			}
			got++
			free = append(free, chatOf[idx-first])
			if next < first+n {
				launch()
			}
			stall.Reset(stallTimeout)
		case <-stall.C:
			b.Fatalf("no reply for %s: %d of %d messages answered", stallTimeout, got, n)
		}
	}
	return time.Since(began)
}

func chatRange(from int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

// cpuTime is the user+system CPU time this process used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// timedTelegram is the real Telegram channel with Send (which marks a reply
// delivered) and Typing timed.
type timedTelegram struct {
	*telegram.Channel
	env *benchEnv
}

func (t *timedTelegram) Send(ctx context.Context, m channels.Outbound) (string, error) {
	defer t.env.ops.since("telegram sendMessage", time.Now())
	id, err := t.Channel.Send(ctx, m)
	if err == nil {
		t.env.delivered(m.Text)
	}
	return id, err
}

func (t *timedTelegram) Typing(ctx context.Context, to channels.Address) error {
	defer t.env.ops.since("telegram sendChatAction", time.Now())
	return t.Channel.Typing(ctx, to)
}

// sinkChannel is an in-memory chat platform that only records deliveries.
type sinkChannel struct {
	env *benchEnv
	ids atomic.Int64
}

func (s *sinkChannel) Platform() string { return "bench" }

func (s *sinkChannel) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (s *sinkChannel) Send(_ context.Context, m channels.Outbound) (string, error) {
	s.env.delivered(m.Text)
	return strconv.FormatInt(s.ids.Add(1), 10), nil
}

// opTimer counts the calls to each store operation and their wall time.
type opTimer struct {
	mu  sync.Mutex
	ops map[string]*opStat
}

type opStat struct {
	calls int
	total time.Duration
}

func (t *opTimer) since(op string, start time.Time) {
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.ops[op]
	if s == nil {
		s = &opStat{}
		t.ops[op] = s
	}
	s.calls++
	s.total += d
}

func (t *opTimer) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.ops)
}

// report logs, per system, the calls per message and mean wall time per
// call, and reports the Postgres and Redis time per message. Calls overlap
// (lanes run in parallel), so the times add up to more than the wall time.
func (t *opTimer) report(b *testing.B, msgs int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.ops))
	for n := range t.ops {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return t.ops[names[i]].total > t.ops[names[j]].total })
	perMsg := map[string]float64{}
	parts := map[string][]string{}
	for _, n := range names {
		s := t.ops[n]
		system, op, _ := strings.Cut(n, " ")
		perMsg[system] += ms(s.total) / float64(msgs)
		parts[system] = append(parts[system], fmt.Sprintf("%s %.2f×%.2fms",
			op, float64(s.calls)/float64(msgs), ms(s.total)/float64(s.calls)))
	}
	var lines strings.Builder
	for _, system := range []string{"postgres", "redis", "telegram"} {
		if len(parts[system]) > 0 {
			fmt.Fprintf(&lines, "\n  %s %.2f ms/msg: %s", system, perMsg[system], strings.Join(parts[system], ", "))
		}
	}
	b.Logf("calls/msg × wall time per call, measured messages only:%s", lines.String())
	b.ReportMetric(perMsg["postgres"], "pg-ms/msg")
	b.ReportMetric(perMsg["redis"], "redis-ms/msg")
}

// timedDB is the Postgres store with the calls on the message path timed;
// who tells the router's calls from the agent's.
type timedDB struct {
	*postgres.DB
	ops *opTimer
	who string
}

func (t timedDB) Load(ctx context.Context, session string, limit int) ([]agentcore.Message, error) {
	defer t.ops.since("postgres Load ("+t.who+")", time.Now())
	return t.DB.Load(ctx, session, limit)
}

func (t timedDB) Append(ctx context.Context, session string, msgs ...agentcore.Message) (int64, error) {
	defer t.ops.since("postgres Append ("+t.who+")", time.Now())
	return t.DB.Append(ctx, session, msgs...)
}

func (t timedDB) Insert(ctx context.Context, session string, after int64, msgs ...agentcore.Message) (int64, int, error) {
	defer t.ops.since("postgres Insert ("+t.who+")", time.Now())
	return t.DB.Insert(ctx, session, after, msgs...)
}

func (t timedDB) Enqueue(ctx context.Context, m bot.OutboxMessage) (int64, error) {
	defer t.ops.since("postgres Enqueue", time.Now())
	return t.DB.Enqueue(ctx, m)
}

func (t timedDB) Claim(ctx context.Context, owner string, limit int, lease time.Duration, beat bool) ([]bot.OutboxMessage, error) {
	defer t.ops.since("postgres Claim", time.Now())
	return t.DB.Claim(ctx, owner, limit, lease, beat)
}

func (t timedDB) MarkSentAll(ctx context.Context, sent []bot.Sent) error {
	defer t.ops.since("postgres MarkSentAll", time.Now())
	return t.DB.MarkSentAll(ctx, sent)
}

func (t timedDB) EnqueueClaimed(ctx context.Context, m bot.OutboxMessage, claim bot.Claim) (bot.OutboxMessage, bool, error) {
	defer t.ops.since("postgres EnqueueClaimed", time.Now())
	return t.DB.EnqueueClaimed(ctx, m, claim)
}

func (t timedDB) InsertReply(ctx context.Context, session string, after int64, reply agentcore.Message, m bot.OutboxMessage, claim bot.Claim) (bot.StoredReply, error) {
	defer t.ops.since("postgres InsertReply", time.Now())
	return t.DB.InsertReply(ctx, session, after, reply, m, claim)
}

// timedRedis is the Redis store with dedupe and session locks timed.
type timedRedis struct {
	*redis.Store
	ops *opTimer
}

func (t timedRedis) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	defer t.ops.since("redis FirstSeen (dedupe)", time.Now())
	return t.Store.FirstSeen(ctx, key, ttl)
}

func (t timedRedis) Obtain(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	defer t.ops.since("redis lock Obtain", time.Now())
	l, err := t.Store.Obtain(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	return timedLock{Lock: l, ops: t.ops}, nil
}

type timedLock struct {
	bot.Lock
	ops *opTimer
}

func (t timedLock) Release(ctx context.Context) error {
	defer t.ops.since("redis lock Release", time.Now())
	return t.Lock.Release(ctx)
}
