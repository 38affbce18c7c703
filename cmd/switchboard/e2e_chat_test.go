package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// chatProc is one `switchboard chat` whose stdout and stderr share one
// log, as on a terminal.
type chatProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *channeltest.Log
	done  chan error
}

func startChat(t *testing.T, env ...string) *chatProc {
	t.Helper()
	cmd := exec.Command(binPath, "chat")
	cmd.Dir = t.TempDir()
	cmd.Env = append(baseEnv(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &chatProc{t: t, cmd: cmd, stdin: stdin, out: &channeltest.Log{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("switchboard chat output:\n%s", p.out.String())
		}
	})
	return p
}

// startChatOn starts switchboard chat with the fake model llm, a fresh
// database, Redis prefix and data dir, and env; it returns once the
// prompt is shown.
func startChatOn(t *testing.T, llm *llmtest.Server, env ...string) *chatProc {
	t.Helper()
	p := startChat(t, append([]string{
		"SWITCHBOARD_LLM_BASE_URL=" + llm.URL(),
		"SWITCHBOARD_LLM_MODEL=test-model",
		"SWITCHBOARD_DATABASE_URL=" + pgtest.New(t),
		"SWITCHBOARD_REDIS_URL=" + redistest.URL(t),
		"SWITCHBOARD_REDIS_PREFIX=" + redistest.Prefix(t),
		"SWITCHBOARD_DATA_DIR=" + reachableDir(t),
	}, env...)...)
	p.waitAfter(testCtx(t, time.Minute), 0, regexp.MustCompile(`type a message`))
	return p
}

// typeLine types line and returns how much output there was before it, so
// that a wait can look at what came after.
func (p *chatProc) typeLine(line string) int {
	p.t.Helper()
	mark := len(p.out.String())
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("type %q: %v", line, err)
	}
	return mark
}

// waitAfter waits until the output after mark matches re and returns the
// match's groups.
func (p *chatProc) waitAfter(ctx context.Context, mark int, re *regexp.Regexp) []string {
	p.t.Helper()
	for {
		if m := re.FindStringSubmatch(p.out.String()[mark:]); m != nil {
			return m
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("no output matching %q after offset %d", re, mark)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// quit ends input and waits for the process to exit cleanly.
func (p *chatProc) quit(ctx context.Context) {
	p.t.Helper()
	_ = p.stdin.Close()
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Fatalf("chat exited with %v", err)
		}
	case <-ctx.Done():
		p.t.Fatal("chat did not exit at end of input")
	}
}

// TestE2EChatApprovesByNumber: with no platform token at all, a message
// that makes the model call exec shows the approval as numbered choices
// in the terminal; typing 1 allows it as console:local, the command runs
// and its output is the reply. /deny N refuses the next one. Replies are
// rendered for the terminal, and no log line (at debug level, so there
// are many) shares a line with the conversation.
func TestE2EChatApprovesByNumber(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	llm := llmtest.NewServer()
	defer llm.Close()
	p := startChatOn(t, llm, "SWITCHBOARD_LOG_LEVEL=debug")

	choices := regexp.MustCompile(`#(\d+)   1\) Allow once  2\) Always allow  3\) Deny\n\s+type 1-3 to choose \(a number answers the newest request\), or /allow (\d+), /deny (\d+)`)
	mark := p.typeLine(`please CALL_TOOL:exec {"command":"echo approved-in-terminal"}`)
	m := p.waitAfter(ctx, mark, choices)
	id := m[1]
	if m[2] != id || m[3] != id {
		t.Fatalf("the choices name #%s but /allow %s, /deny %s", id, m[2], m[3])
	}
	shown := p.out.String()[mark:]
	if strings.Contains(shown, "*Approval needed*") || !strings.Contains(shown, "Approval needed") {
		t.Fatalf("the approval request is not rendered for the terminal:\n%s", shown)
	}

	mark = p.typeLine("1")
	// The press's answer, the request's edit and the resumed run's reply
	// are independent of each other: each is waited for, in any order.
	for _, want := range []string{"tool exec said: approved-in-terminal", "Done: allowed once.", "(#" + id + " updated)", "Allowed once by console:local"} {
		p.waitAfter(ctx, mark, regexp.MustCompile(regexp.QuoteMeta(want)))
	}

	mark = p.typeLine(`CALL_TOOL:exec {"command":"echo never-runs"}`)
	id = p.waitAfter(ctx, mark, choices)[1]
	mark = p.typeLine("/deny " + id)
	p.waitAfter(ctx, mark, regexp.MustCompile(`tool exec said: the approvers denied this command`))
	if strings.Contains(p.out.String(), "tool exec said: never-runs") {
		t.Fatal("a denied command ran")
	}
	p.quit(ctx)

	for line := range strings.Lines(p.out.String()) {
		if strings.Contains(line, "level=") && !strings.HasPrefix(line, "time=") {
			t.Fatalf("a log line shares its line with the conversation: %q", line)
		}
	}
}

// docRequest is one curl command of docs/try-it.md's Telegram walk.
type docRequest struct {
	method, path, body string
}

// tryItRequests reads the curl commands of docs/try-it.md, in order:
// `curl -s $CTL/path -d 'JSON'` (a POST) or `curl -s "$CTL/path?query"`.
func tryItRequests(t *testing.T) []docRequest {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "try-it.md"))
	if err != nil {
		t.Fatal(err)
	}
	post := regexp.MustCompile(`^curl -s \$CTL(/\S+) -d '(.*)'$`)
	get := regexp.MustCompile(`^curl -s "\$CTL(/[^"]+)"$`)
	var out []docRequest
	for line := range strings.Lines(string(doc)) {
		line = strings.TrimSpace(line)
		if m := post.FindStringSubmatch(line); m != nil {
			out = append(out, docRequest{"POST", m[1], m[2]})
		} else if m := get.FindStringSubmatch(line); m != nil {
			out = append(out, docRequest{"GET", m[1], ""})
		} else if strings.HasPrefix(line, "curl ") {
			t.Fatalf("docs/try-it.md: a curl command this test cannot run: %s", line)
		}
	}
	if len(out) != 4 {
		t.Fatalf("docs/try-it.md has %d curl commands, want the walk's 4: %+v", len(out), out)
	}
	return out
}

// startFakes builds and runs deploy/fakes with its control endpoint on
// controlAddr and returns its four base URLs and the control URL.
func startFakes(t *testing.T, token, controlAddr string) (urls []string, control string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakes")
	if out, err := exec.Command("go", "build", "-o", bin, "../../deploy/fakes").CombinedOutput(); err != nil {
		t.Fatalf("build deploy/fakes: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-control", controlAddr, token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatal("deploy/fakes printed no URLs")
	}
	urls = strings.Fields(sc.Text())
	if !sc.Scan() || len(urls) != 4 {
		t.Fatalf("deploy/fakes printed %q and no control URL", urls)
	}
	return urls, sc.Text()
}

// TestE2ETryItTelegramWalk runs the scripted Telegram walk of
// docs/try-it.md — its own curl requests, against the built deploy/fakes
// and daemon: the admin gets the approval request with its buttons, the
// press by label decides it, and the command's output reaches the user.
func TestE2ETryItTelegramWalk(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	steps := tryItRequests(t)
	const token = "123456:fake-token"
	urls, ctl := startFakes(t, token, freeAddr(t))
	if !strings.HasPrefix(ctl, "http://127.0.0.1:") {
		t.Fatalf("control URL %q is not on loopback", ctl)
	}
	addr := freeAddr(t)
	d := startDaemon(t, t.TempDir(), addr, map[string]string{
		"SWITCHBOARD_TELEGRAM_TOKEN": token, "SWITCHBOARD_TELEGRAM_API_URL": urls[0],
		"SWITCHBOARD_LLM_BASE_URL": urls[1], "SWITCHBOARD_LLM_MODEL": "llmtest",
		"SWITCHBOARD_ADMINS": "telegram:500", "SWITCHBOARD_ACCESS_MODE": "open",
		"SWITCHBOARD_DATABASE_URL": pgtest.New(t), "SWITCHBOARD_REDIS_URL": redistest.URL(t),
		"SWITCHBOARD_REDIS_PREFIX": redistest.Prefix(t), "SWITCHBOARD_DATA_DIR": reachableDir(t),
		"SWITCHBOARD_HTTP_LISTEN": addr,
	})
	d.waitReady(ctx)

	answers := make([]string, len(steps))
	for i, s := range steps {
		req, err := http.NewRequestWithContext(ctx, s.method, ctl+s.path, strings.NewReader(s.body))
		if err != nil {
			t.Fatal(err)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("step %d %s %s: %v", i+1, s.method, s.path, err)
		}
		body, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("step %d %s %s: %d %s", i+1, s.method, s.path, r.StatusCode, body)
		}
		answers[i] = string(body)
	}
	var request []telegramtest.ControlMessage
	if err := json.Unmarshal([]byte(answers[1]), &request); err != nil || len(request) == 0 {
		t.Fatalf("the admin got no approval request: %v %s", err, answers[1])
	}
	if !strings.Contains(request[0].Text, "echo hello from exec") || len(request[0].Buttons) == 0 || request[0].Buttons[0][0].Text != "Allow once" {
		t.Fatalf("approval request = %+v", request[0])
	}
	var reply []telegramtest.ControlMessage
	if err := json.Unmarshal([]byte(answers[3]), &reply); err != nil || len(reply) == 0 ||
		!strings.Contains(reply[0].Text, "tool exec said: hello from exec") {
		t.Fatalf("the user got no output of the allowed command: %v %s", err, answers[3])
	}
}
