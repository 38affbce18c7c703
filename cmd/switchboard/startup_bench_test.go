package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// Readiness is polled this often, so ms-to-ready is at most this much late.
const readyPoll = 2 * time.Millisecond

// idleFor is how long the daemon sits idle before its memory is read, so
// the reading is of the idle daemon, not of its start-up.
const idleFor = 4 * time.Second

// BenchmarkServeStartToReady starts the built binary (`switchboard serve`)
// on the external PostgreSQL and Redis, with the Telegram fake and the
// scripted LLM, and measures the time from exec to the first 200 of
// /readyz. A warm-up start applies the migrations first, so the measured
// starts find the schema in place. After each measured start the daemon
// idles for idleFor, then its resident memory is read from /proc.
func BenchmarkServeStartToReady(b *testing.B) {
	tg := telegramtest.NewServer(testToken)
	b.Cleanup(tg.Close)
	llm := llmtest.NewServer()
	b.Cleanup(llm.Close)
	env := benchEnv(b, tg, llm)
	dir := b.TempDir()

	warm := startServe(b, dir, env)
	warm.untilReady(b, time.Now())
	warm.stop(b)

	var readyMS []float64
	mem := map[string][]float64{}
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		p := startServe(b, dir, env)
		took := p.untilReady(b, began)
		b.StopTimer()
		readyMS = append(readyMS, float64(took)/float64(time.Millisecond))
		time.Sleep(idleFor)
		for k, v := range p.memoryMB(b) {
			mem[k] = append(mem[k], v)
		}
		p.stop(b)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(mean(readyMS), "ms-to-ready")
	b.ReportMetric(mean(mem["VmRSS"]), "idle-rss-MB")
	b.ReportMetric(mean(mem["VmHWM"]), "peak-rss-MB")
	b.ReportMetric(mean(mem["RssAnon"]), "idle-anon-MB")
	b.ReportMetric(mean(mem["RssFile"]), "idle-file-MB")
	b.Logf("ms-to-ready per start: %.1f; idle RSS MB: %.1f", readyMS, mem["VmRSS"])
}

// benchEnv configures a benchmark's daemon: the Telegram fake tg, the
// scripted LLM llm, a fresh database and Redis prefix, access open.
func benchEnv(b *testing.B, tg *telegramtest.Server, llm *llmtest.Server) map[string]string {
	return map[string]string{
		"SWITCHBOARD_TELEGRAM_TOKEN":   testToken,
		"SWITCHBOARD_TELEGRAM_API_URL": tg.URL(),
		"SWITCHBOARD_LLM_BASE_URL":     llm.URL(),
		"SWITCHBOARD_LLM_MODEL":        "test-model",
		"SWITCHBOARD_DATABASE_URL":     pgtest.New(b),
		"SWITCHBOARD_REDIS_URL":        redistest.URL(b),
		"SWITCHBOARD_REDIS_PREFIX":     redistest.Prefix(b),
		"SWITCHBOARD_ACCESS_MODE":      "open",
		"SWITCHBOARD_DATA_DIR":         b.TempDir(),
	}
}

// servedProc is one `switchboard serve` process.
type servedProc struct {
	cmd  *exec.Cmd
	out  *channeltest.Log
	addr string
	done chan struct{}
}

// startServe execs `switchboard serve` in dir with env, on a fresh HTTP
// address.
func startServe(b *testing.B, dir string, env map[string]string) *servedProc {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd := exec.Command(binPath, "serve")
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "SWITCHBOARD_HTTP_LISTEN="+addr)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &servedProc{cmd: cmd, out: &channeltest.Log{}, addr: addr, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		b.Fatalf("start switchboard: %v", err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	b.Cleanup(func() { p.stop(b) })
	return p
}

// untilReady polls /readyz every readyPoll and returns the time from began
// to the first 200.
func (p *servedProc) untilReady(b *testing.B, began time.Time) time.Duration {
	b.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Second}
	deadline := began.Add(30 * time.Second)
	for {
		resp, err := client.Get("http://" + p.addr + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(began)
			}
		}
		select {
		case <-p.done:
			b.Fatalf("switchboard exited before it was ready:\n%s", p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("switchboard not ready after 30s:\n%s", p.out.String())
		}
		time.Sleep(readyPoll)
	}
}

// memoryMB reads the process's memory from /proc/<pid>/status, in MB, by
// field: VmRSS (resident now), VmHWM (peak resident), RssAnon (private
// memory: heap, stacks) and RssFile (mapped pages of the binary and
// libraries).
func (p *servedProc) memoryMB(b *testing.B) map[string]float64 {
	b.Helper()
	mem, err := procMemoryMB(p.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	return mem
}

// procMemoryMB reads memFields of process pid from /proc/<pid>/status, in
// MB; unlike memoryMB it may run off the benchmark's goroutine.
func procMemoryMB(pid int) (map[string]float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("read process status: %w", err)
	}
	defer f.Close()
	mem := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || !slices.Contains(memFields, key) {
			continue
		}
		fields := strings.Fields(val) // "12345 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return nil, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("unexpected %s line %q: %w", key, sc.Text(), err)
		}
		mem[key] = kb / 1024
	}
	if len(mem) != len(memFields) {
		return nil, fmt.Errorf("/proc/%d/status has %v, want all of %v", pid, mem, memFields)
	}
	return mem, nil
}

// memFields are the /proc/<pid>/status fields memoryMB reads.
var memFields = []string{"VmRSS", "VmHWM", "RssAnon", "RssFile"}

// stop sends SIGTERM and waits for the exit (SIGKILL after 20s).
func (p *servedProc) stop(b *testing.B) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		b.Errorf("switchboard did not stop within 20s of SIGTERM; killing it")
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
