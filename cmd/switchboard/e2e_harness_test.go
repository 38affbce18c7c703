package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// binPath is the switchboard binary built once for the end-to-end tests.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "switchboard-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	// The embedded PostgreSQL runs as a non-root user when tests run as
	// root: it must be able to reach the binary's folder.
	_ = os.Chmod(dir, 0o755)
	binPath = filepath.Join(dir, "switchboard")
	out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build switchboard: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	stopBrowser()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// daemonProc is one running switchboard process.
type daemonProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    *channeltest.Log
	http   string // host:port of its HTTP server
	done   chan struct{}
	exitCd int
}

// baseEnv is the test process environment without any SWITCHBOARD_* (so
// a developer's settings never leak into a test).
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWITCHBOARD_") {
			env = append(env, kv)
		}
	}
	return env
}

// freeAddr returns a loopback host:port nothing listens on right now.
//
// The port comes from below Linux's ephemeral range (32768–60999), so no
// listener that asks the kernel for any free port (the in-process Redis,
// the embedded PostgreSQL, httptest servers) can take it between this
// check and the daemon's listen; within this test binary no port is handed
// out twice.
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		if handedOut[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		_ = ln.Close()
		handedOut[port] = true
		return ln.Addr().String()
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// handedOut are the ports freeAddr gave out.
var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// startDaemon runs `switchboard args…` in dir with env added to baseEnv.
// httpAddr is where its HTTP server listens ("" when not needed).
func startDaemon(t *testing.T, dir, httpAddr string, env map[string]string, args ...string) *daemonProc {
	t.Helper()
	if len(args) == 0 {
		args = []string{"serve"}
	}
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &daemonProc{t: t, cmd: cmd, out: &channeltest.Log{}, http: httpAddr, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start switchboard: %v", err)
	}
	go func() {
		_ = cmd.Wait()
		p.exitCd = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("switchboard output:\n%s", p.out.String())
		}
	})
	return p
}

// stop sends SIGTERM and waits (then SIGKILL after 20s).
func (p *daemonProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill9 kills the process without any chance to clean up.
func (p *daemonProc) kill9() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// wait waits for the process to exit and returns its exit code.
func (p *daemonProc) wait(ctx context.Context) (int, error) {
	select {
	case <-p.done:
		return p.exitCd, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// readyz returns the status code and body of GET /readyz ("" on error).
func (p *daemonProc) get(path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + p.http + path)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitReady polls /readyz until 200, failing the test with the last body
// when ctx ends or the process exits.
func (p *daemonProc) waitReady(ctx context.Context) {
	p.t.Helper()
	p.waitStatus(ctx, "/readyz", http.StatusOK)
}

func (p *daemonProc) waitStatus(ctx context.Context, path string, want int) string {
	p.t.Helper()
	var code int
	var body string
	for {
		code, body = p.get(path)
		if code == want {
			return body
		}
		select {
		case <-p.done:
			p.t.Fatalf("switchboard exited (code %d) before %s was %d", p.exitCd, path, want)
		case <-ctx.Done():
			p.t.Fatalf("%s never answered %d; last %d %s", path, want, code, body)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// notReady decodes a /readyz 503 body.
func notReady(t *testing.T, body string) map[string]string {
	t.Helper()
	var v struct {
		Status   string            `json:"status"`
		NotReady map[string]string `json:"not_ready"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("readyz body %q: %v", body, err)
	}
	return v.NotReady
}

// proxy is a TCP forwarder that can be switched on later, to make a
// dependency "come back" on the same address, and off again (stop) to
// make it go away.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{addr: freeAddr(t), target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(p.stop)
	return p
}

// start begins forwarding connections.
func (p *proxy) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy listen %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

// forward copies between c and a new connection to the target.
func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer u.Close()
	if !p.track(c, u) {
		return
	}
	defer p.untrack(c, u)
	go func() { _, _ = io.Copy(u, c) }()
	_, _ = io.Copy(c, u)
}

func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false // stopped meanwhile
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// stop refuses new connections and cuts every open one, as a dependency
// that went down.
func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// hostPort returns the host:port of a URL.
func hostPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return u.Host
}

// waitAnswers waits until chat holds at least n bot answers (progress
// notes left out, see isProgress) and returns them, oldest first.
func waitAnswers(ctx context.Context, tg *telegramtest.Server, chat int64, n int) ([]telegramtest.Message, error) {
	for {
		var out []telegramtest.Message
		for _, m := range tg.Messages(chat) {
			if !isProgress(m) {
				out = append(out, m)
			}
		}
		if len(out) >= n {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("chat %d has %d answers, want %d: %w", chat, len(out), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// telegramE2E is one daemon serving a fake Telegram, with a scripted
// model (llmtest's Echo unless the test sets a handler).
type telegramE2E struct {
	tg        *telegramtest.Server
	llm       *llmtest.Server
	env       map[string]string
	dir, addr string
	d         *daemonProc
}

// startTelegramE2E starts the fakes and a daemon configured by
// externalEnv, changed by tune when not nil, and waits until it is ready.
// Everything stops when the test ends.
func startTelegramE2E(ctx context.Context, t *testing.T, tune func(env map[string]string)) *telegramE2E {
	t.Helper()
	e := &telegramE2E{tg: telegramtest.NewServer(testToken), llm: llmtest.NewServer(), dir: t.TempDir(), addr: freeAddr(t)}
	t.Cleanup(e.tg.Close)
	t.Cleanup(e.llm.Close)
	e.env = externalEnv(t, e.tg, e.llm, e.addr)
	if tune != nil {
		tune(e.env)
	}
	e.restart(ctx, t)
	return e
}

// restart starts the daemon again on the same data and configuration (the
// previous one must have stopped) and waits until it is ready.
func (e *telegramE2E) restart(ctx context.Context, t *testing.T) {
	t.Helper()
	e.d = startDaemon(t, e.dir, e.addr, e.env)
	e.d.waitReady(ctx)
}

// reachableDir is a temporary directory every user can pass through, so
// that exec's unprivileged user (the daemon runs as root in CI) reaches
// the workspaces under it; t.TempDir's parent is private.
func reachableDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sb-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// writeConfig writes cfg as dir's switchboard.yaml.
func writeConfig(t *testing.T, dir, cfg string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startReplica starts one more daemon on base's stores, in a directory of
// its own with cfg as its config file, and waits until it is ready.
func startReplica(ctx context.Context, t *testing.T, base map[string]string, cfg string) *daemonProc {
	t.Helper()
	dir := t.TempDir()
	writeConfig(t, dir, cfg)
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	addr := freeAddr(t)
	env["SWITCHBOARD_HTTP_LISTEN"] = addr
	env["SWITCHBOARD_DATA_DIR"] = filepath.Join(dir, "data")
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	return d
}

// fakes starts a fake Telegram and a fake LLM, closed when the test ends.
func fakes(t *testing.T) (*telegramtest.Server, *llmtest.Server) {
	t.Helper()
	tg := telegramtest.NewServer(testToken)
	t.Cleanup(tg.Close)
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	return tg, llm
}

// withSlack points env at the fake Slack (Socket Mode and Web API).
func withSlack(env map[string]string, sl *slacktest.Server) {
	env["SWITCHBOARD_SLACK_BOT_TOKEN"] = slackBot
	env["SWITCHBOARD_SLACK_APP_TOKEN"] = slackApp
	env["SWITCHBOARD_SLACK_API_URL"] = sl.URL()
}

// withDiscord points env at the fake Discord (gateway and REST).
func withDiscord(env map[string]string, dc *discordtest.Server) {
	env["SWITCHBOARD_DISCORD_TOKEN"] = discordToken
	env["SWITCHBOARD_DISCORD_API_URL"] = dc.URL()
}

// toolBrain scripts the model for tool tests: a user message whose first
// word names an entry of calls becomes that tool call (given the rest of
// the message); a tool's result is answered "tool said: <result>"; any
// other request gets otherwise's text.
func toolBrain(calls map[string]func(rest string) llmtest.ToolCall, otherwise func(llmtest.Request) string) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "tool" {
			return llmtest.Reply{Text: "tool said: " + last.Content}
		}
		word, rest, _ := strings.Cut(last.Content, " ")
		if call, ok := calls[word]; ok && last.Role == "user" {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call(rest)}}
		}
		return llmtest.Reply{Text: otherwise(r)}
	}
}
