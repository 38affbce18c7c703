// Command load measures the built daemon as it is deployed: it serves a
// Telegram Bot API fake and a model that echoes on loopback, starts
// the daemon command given after "--" against them, waits until it is ready,
// sends messages from distinct chats with a fixed number unanswered, and
// reports messages per second, the latency of each reply (from the message
// reaching the fake to the reply reaching it) and the CPU each message cost
// the daemon, PostgreSQL and Redis (when they run on this machine) and this
// command itself. Then it stops the daemon and exits. It is bounded: -n
// messages, and -timeout for the whole run.
//
// The caller's environment supplies PostgreSQL, Redis and the HTTP listen
// address; load adds the Telegram and model settings, open access and no
// rate limits:
//
//	go build -o /tmp/load ./deploy/load
//	CGO_ENABLED=0 go build -tags noembedded -trimpath -ldflags="-s -w" -o /tmp/sb ./cmd/switchboard
//	SWITCHBOARD_DATABASE_URL=postgres://postgres@127.0.0.1:5432/load?sslmode=disable \
//	SWITCHBOARD_REDIS_URL=redis://127.0.0.1:6379/7 SWITCHBOARD_HTTP_LISTEN=127.0.0.1:18089 \
//	SWITCHBOARD_EXEC_SANDBOX=none /tmp/load -n 2000 -inflight 200 -- /tmp/sb serve
//
// Unlike BenchmarkPipeline (bot), which runs the pipeline in the test process
// with a model that answers in-process, this measures the whole binary over
// its real connections, model HTTP calls included; the fakes run in this
// process, so its own CPU is reported apart from the daemon's. The fakes are
// lean (model.go, telegram.go) unless -model llmtest and -telegram full ask
// for the tests' full ones.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// token is the bot token the Telegram fake accepts (any well-formed one).
const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"

func main() {
	var o options
	flag.IntVar(&o.n, "n", 2000, "messages to measure")
	flag.IntVar(&o.warmup, "warmup", 100, "messages sent before measuring (other chats)")
	flag.IntVar(&o.inflight, "inflight", 200, "messages unanswered at a time (one per chat)")
	flag.IntVar(&o.chats, "chats", 0, "distinct chats the measured messages come from (default: -inflight)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "limit for the whole run")
	flag.DurationVar(&o.stall, "stall", 30*time.Second, "give up when no reply arrives for this long")
	flag.StringVar(&o.model, "model", "lean", `the model fake: "lean" (cheap, echoes) or "llmtest" (decodes and checks every request in full, as the tests' fake does)`)
	flag.StringVar(&o.telegram, "telegram", "lean", `the Telegram fake: "lean" (cheap) or "full" (telegramtest's, which checks every call in full and keeps every message, as the tests' fake does)`)
	flag.IntVar(&o.jobOpts.jobs, "jobs", 0, "jobs mode: this many config jobs due every minute (no messages are sent)")
	flag.IntVar(&o.jobOpts.replicas, "replicas", 3, "jobs mode: daemons sharing PostgreSQL and Redis")
	flag.IntVar(&o.jobOpts.slots, "slots", 2, "jobs mode: whole minutes measured")
	flag.DurationVar(&o.jobOpts.killAt, "kill-at", 0, "jobs mode: kill the last replica (SIGKILL) this long into the first measured slot")
	flag.IntVar(&o.jobOpts.basePort, "base-port", 18190, "jobs mode: the replicas listen on 127.0.0.1 from this port up")
	flag.IntVar(&o.seedSessions, "seed-sessions", 0, "before the daemon starts, store this many answered Telegram chats (chat ids 1…N)")
	flag.IntVar(&o.seedMessages, "seed-messages", 0, "the messages of those chats in all, spread evenly (default: 10 per chat)")
	flag.IntVar(&o.history, "history", 0, "also store one chat of this many messages, and after the measured messages (each from a new chat, one at a time) send as many in that chat and report both latencies")
	flag.DurationVar(&o.idle, "idle", 0, "idle mode: send nothing and report the CPU the daemon and PostgreSQL use over this long, after -settle")
	flag.DurationVar(&o.settle, "settle", time.Minute, "idle mode: wait this long after ready before measuring")
	flag.StringVar(&o.ready, "ready", "", "URL that answers 2xx once the daemon is ready (default: http://$SWITCHBOARD_HTTP_LISTEN/readyz)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: load [flags] -- DAEMON [ARGS...]   (e.g. -- /tmp/sb serve)")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.command = flag.Args()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if o.idle > 0 {
		r, err := runIdle(ctx, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		r.print(os.Stdout, o)
		return
	}
	if o.jobOpts.jobs > 0 {
		r, err := runJobs(ctx, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		r.print(os.Stdout)
		return
	}
	r, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	r.print(os.Stdout, o)
}

// maxMessages bounds a run: the fakes keep every message and model request
// in memory, for the assertions tests make on them.
const maxMessages = 20_000

// options are the command's flags.
type options struct {
	n, warmup, inflight, chats int
	timeout, stall             time.Duration
	ready, model, telegram     string
	command                    []string
	jobOpts                    jobOptions
	seedSessions, seedMessages int
	history                    int           // messages stored in the long chat; 0: none
	idle, settle               time.Duration // idle mode: measured, and waited before
}

// check fills in defaults and says what is wrong with the flags.
func (o *options) check() error {
	if len(o.command) == 0 {
		return errors.New("no daemon command after --")
	}
	switch {
	case o.seedSessions < 0 || o.seedMessages < 0 || o.history < 0:
		return errors.New("-seed-sessions, -seed-messages and -history must not be negative")
	case o.seedMessages > 0 && o.seedMessages < 2*o.seedSessions:
		return errors.New("-seed-messages must be at least two per seeded chat (a message and its reply)")
	case o.history == 1:
		return errors.New("-history must be at least 2 (a message and its reply)")
	}
	if o.jobOpts.jobs > 0 {
		jo := o.jobOpts
		switch {
		case jo.replicas < 1 || jo.slots < 1:
			return errors.New("-replicas and -slots must be at least 1")
		case jo.killAt < 0 || jo.killAt >= time.Duration(jo.slots)*time.Minute:
			return errors.New("-kill-at must fall within the measured slots")
		case jo.killAt > 0 && jo.replicas < 2:
			return errors.New("-kill-at needs at least two -replicas: the others take the killed one's runs over")
		}
		return nil // the jobs mode sends no messages and listens where -base-port says
	}
	if err := o.checkFakes(); err != nil {
		return err
	}
	if o.idle <= 0 {
		if err := o.checkMessages(); err != nil {
			return err
		}
	}
	if o.ready == "" {
		listen := os.Getenv("SWITCHBOARD_HTTP_LISTEN")
		if listen == "" {
			return errors.New("set SWITCHBOARD_HTTP_LISTEN (e.g. 127.0.0.1:18089) or -ready, so load can tell when the daemon is ready")
		}
		if strings.HasPrefix(listen, ":") {
			listen = "127.0.0.1" + listen
		}
		o.ready = "http://" + listen + "/readyz"
	}
	return nil
}

// checkFakes fills in and checks the choice of fakes.
func (o *options) checkFakes() error {
	if o.model == "" {
		o.model = "lean"
	}
	if o.model != "lean" && o.model != "llmtest" {
		return fmt.Errorf(`-model is "lean" or "llmtest", not %q`, o.model)
	}
	if o.telegram == "" {
		o.telegram = "lean"
	}
	if o.telegram != "lean" && o.telegram != "full" {
		return fmt.Errorf(`-telegram is "lean" or "full", not %q`, o.telegram)
	}
	return nil
}

// checkMessages fills in and checks what the messages mode sends.
func (o *options) checkMessages() error {
	if o.history > 0 {
		// Each measured message opens a new chat, one at a time, as each
		// in the long chat will.
		o.inflight, o.chats = 1, o.n
	}
	if o.chats == 0 {
		o.chats = o.inflight
	}
	switch {
	case o.n < 1 || o.warmup < 0:
		return errors.New("-n must be at least 1 and -warmup at least 0")
	case o.n*o.phases()+o.warmup > maxMessages:
		return fmt.Errorf("-n (twice with -history) plus -warmup must be at most %d: the fakes keep every request and message (~15 KB each); run several rounds instead", maxMessages)
	case o.inflight < 1 || o.chats < o.inflight:
		return errors.New("-inflight must be at least 1 and -chats at least -inflight (one unanswered message per chat)")
	}
	return nil
}

// phases is how many times -n messages are sent: once, or twice with
// -history (in new chats, then in the long one).
func (o *options) phases() int {
	if o.history > 0 {
		return 2
	}
	return 1
}

// run serves the fakes, starts the daemon, sends the messages and measures.
func run(ctx context.Context, o options) (result, error) {
	if err := o.seed(ctx); err != nil {
		return result{}, err
	}
	b, err := startBench(ctx, o)
	if err != nil {
		return result{}, err
	}
	defer b.close()

	// The fake numbers its messages from 1 in every run, and the daemon
	// drops a message whose chat and id it has stored (a redelivery), so
	// each run talks in chats no earlier run on this database used.
	base := 10_000 * (time.Now().UnixMilli() % 1_000_000_000)
	l := newLoad(b.tg, o.warmup+o.n*o.phases())
	if _, err := l.drive(ctx, 0, o.warmup, min(16, o.inflight), chatRange(base+int64(o.chats), o.warmup), o.stall); err != nil {
		return result{}, b.refused(fmt.Errorf("warm-up: %w", err))
	}
	metrics := metricsURL(o.ready)
	heapBefore := scrapeHeap(ctx, metrics)
	before := sample(b.d.pid())
	elapsed, err := l.drive(ctx, o.warmup, o.n, o.inflight, chatRange(base, o.chats), o.stall)
	if err != nil {
		return result{}, b.refused(err)
	}
	after := sample(b.d.pid())
	r := result{elapsed: elapsed, latency: l.latencies(o.warmup, o.n), cpu: after.since(before),
		heap: scrapeHeap(ctx, metrics).since(heapBefore)}
	if o.history > 0 {
		first := o.warmup + o.n
		before := sample(b.d.pid())
		if _, err := l.drive(ctx, first, o.n, 1, []int64{o.longChat()}, o.stall); err != nil {
			return r, b.refused(fmt.Errorf("in the long chat: %w", err))
		}
		r.long, r.longCPU = l.latencies(first, o.n), sample(b.d.pid()).since(before)
	}
	if odd := l.unexpected(); len(odd) > 0 {
		return r, fmt.Errorf("%d replies answer no message sent, or answer one twice: %q", len(odd), odd[:min(len(odd), 5)])
	}
	return r, nil
}

// bench is the fakes and a daemon started against them.
type bench struct {
	tg   telegram
	lean *leanModel // nil with -model llmtest
	llm  *llmtest.Server
	d    *daemon
}

// startBench serves the fakes o asks for and starts the daemon against
// them, with open access and no rate limits, and waits until it is ready.
func startBench(ctx context.Context, o options) (*bench, error) {
	b := &bench{}
	if o.telegram == "full" {
		b.tg = fullTelegram{telegramtest.NewServer(token)}
	} else {
		b.tg = newLeanTelegram(token)
	}
	var llmURL string
	if o.model == "llmtest" {
		b.llm = llmtest.NewServer()
		llmURL = b.llm.URL()
	} else {
		b.lean = newLeanModel()
		llmURL = b.lean.URL()
	}
	d, err := startDaemon(o.command, []string{
		"SWITCHBOARD_TELEGRAM_TOKEN=" + token,
		"SWITCHBOARD_TELEGRAM_API_URL=" + b.tg.URL(),
		"SWITCHBOARD_LLM_BASE_URL=" + llmURL,
		"SWITCHBOARD_LLM_MODEL=test-model",
		"SWITCHBOARD_ACCESS_MODE=open",
		"SWITCHBOARD_RATELIMIT_USER=off",
		"SWITCHBOARD_RATELIMIT_CHAT=off",
	})
	if err != nil {
		b.close()
		return nil, err
	}
	b.d = d
	if err := d.waitReady(ctx, o.ready); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// close stops the daemon and the fakes.
func (b *bench) close() {
	if b.d != nil {
		b.d.stop()
	}
	b.tg.Close()
	if b.lean != nil {
		b.lean.Close()
	}
	if b.llm != nil {
		b.llm.Close()
	}
}

// refused adds what the lean fakes could not answer to err.
func (b *bench) refused(err error) error {
	if n, why := b.lean.complaints(); n > 0 {
		err = fmt.Errorf("%w; the model fake refused %d requests, the last because: %s", err, n, why)
	}
	if n, why := b.tg.complaints(); n > 0 {
		err = fmt.Errorf("%w; the Telegram fake refused %d calls, the last because: %s", err, n, why)
	}
	return err
}

// longChat is the chat -history stores: the one after the seeded ones.
func (o *options) longChat() int64 { return int64(o.seedSessions) + 1 }

// seed applies the migrations and stores the chats -seed-sessions and
// -history ask for, before the daemon starts.
func (o *options) seed(ctx context.Context) error {
	if o.seedSessions == 0 && o.history == 0 {
		return nil
	}
	if err := migrate(ctx, o.command); err != nil {
		return err
	}
	dbURL := os.Getenv("SWITCHBOARD_DATABASE_URL")
	if o.seedSessions > 0 {
		per := 10
		if o.seedMessages > 0 {
			per = o.seedMessages / o.seedSessions / 2 * 2
		}
		took, err := seedChats(ctx, dbURL, 1, o.seedSessions, per)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "load: stored %d chats of %d messages in %s\n", o.seedSessions, per, took.Round(time.Second))
	}
	if o.history > 0 {
		if _, err := seedChats(ctx, dbURL, o.longChat(), 1, o.history/2*2); err != nil {
			return err
		}
	}
	return nil
}

func chatRange(from int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}
