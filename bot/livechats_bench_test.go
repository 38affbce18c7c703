package bot_test

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

// liveChats and perChat are BenchmarkLiveChats's load: every chat gets a
// session with perChat exchanges of history.
const (
	liveChats   = 10_000
	livePerChat = 3
)

// BenchmarkLiveChats measures what many live chats cost in memory: 10 000
// chats each hold a session with 3 exchanges (the messages go through
// Router.Handle, PostgreSQL, Redis, the lanes and the dispatcher, 200 in
// flight), then the process's memory is read after a GC. The figures are
// this whole test process: the pipeline as the daemon wires it, without
// the HTTP server and platform adapters. Run it once:
//
//	go test -run '^$' -bench LiveChats -benchtime 1x ./bot/
func BenchmarkLiveChats(b *testing.B) {
	env := newBenchEnv(b)
	ch := &sinkChannel{env: env}
	env.start(b, ch, 0)
	rss0, anon0 := procRSS(b)
	total := liveChats * livePerChat
	env.expect(total)
	send := func(idx int, chat int64) {
		id := strconv.FormatInt(chat, 10)
		_ = env.handle(context.Background(), channels.Inbound{
			Platform: ch.Platform(), ChatID: id, UserID: id, UserName: "User " + id,
			Text: "m" + strconv.Itoa(idx), Direct: true, MessageID: strconv.Itoa(idx),
			ExternalID: "live-" + strconv.Itoa(idx),
		})
	}
	b.ResetTimer()
	elapsed := env.drive(b, 0, total, benchChats, chatRange(1_000_000, liveChats), send)
	b.StopTimer()
	env.handled.Wait()
	// Drop the benchmark's own bookkeeping before measuring.
	env.start0, env.end, env.handleDur, env.seen = nil, nil, nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, anon := procRSS(b)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(rss/1024, "rss-MiB")
	b.ReportMetric(anon/1024, "rss-anon-MiB")
	b.ReportMetric((rss-rss0)/float64(liveChats), "rss-KiB/chat")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MiB")
	b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
	b.Logf("before the load: VmRSS %.1f MiB, RssAnon %.1f MiB; after %d chats × %d exchanges: VmRSS %.1f MiB, RssAnon %.1f MiB",
		rss0/1024, anon0/1024, liveChats, livePerChat, rss/1024, anon/1024)
}

// procRSS returns this process's VmRSS and RssAnon in KiB.
func procRSS(b *testing.B) (rss, anon float64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "VmRSS":
			rss = n
		case "RssAnon":
			anon = n
		}
	}
	return rss, anon
}
