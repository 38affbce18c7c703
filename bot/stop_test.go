package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

// waitUntil waits for cond, failing the test after 20 s with what.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRequests waits until the model got n requests.
func waitRequests(t *testing.T, p *pipeline, n int) {
	t.Helper()
	waitUntil(t, strconv.Itoa(n)+" model requests", func() bool { return len(p.llm.Requests()) >= n })
}

// forever is a model reply that never comes: only a cancelled call ends.
var forever = llmtest.Reply{Delay: time.Hour, Text: "too late"}

// TestStopCancelsTheModelCall: /stop from another person in the chat
// cancels the model call at once (the model server sees the client go
// away), the chat is told who stopped it, recovery leaves the session
// alone, and the next turn's model call gets the stop as a note (a user
// message), never the notice as the model's own words.
func TestStopCancelsTheModelCall(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	p.llm.Enqueue(forever)
	p.router.Handle(ctx, msg("c1", "u1", "write me a long essay"))
	waitRequests(t, p, 1)
	p.router.Handle(ctx, msg("c1", "u2", "/stop"))
	got := p.ch.WaitFor(t, "c1", 1)
	if got[0].Text != "⏹ Stopped by test:u2." {
		t.Fatalf("chat got %q, want the stop notice", got[0].Text)
	}
	waitUntil(t, "the model server to see the client go away", func() bool { return p.llm.Abandoned() == 1 })
	unfinished, err := p.db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: -time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range unfinished {
		if strings.HasSuffix(u.Session, "/test:c1") {
			t.Fatalf("recovery would run the stopped turn again: %+v", u)
		}
	}
	p.router.Handle(ctx, msg("c1", "u1", "then a short one"))
	if got := p.ch.WaitFor(t, "c1", 2)[1].Text; !strings.Contains(got, "echo: then a short one") {
		t.Fatalf("next reply = %q", got)
	}
	reqs := p.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (the stopped one and the next)", len(reqs))
	}
	var roles []string
	note := ""
	for _, m := range reqs[1].Messages {
		roles = append(roles, m.Role)
		if strings.Contains(m.Content, "stopped the request above") {
			note = m.Role
		}
		if strings.Contains(m.Content, "⏹") {
			t.Fatalf("the model was shown the stop notice: %+v", reqs[1].Messages)
		}
	}
	if note != "user" {
		t.Fatalf("stop note sent as %q (roles %v), want a user message", note, roles)
	}
	if !strings.Contains(string(reqs[1].Body), "test:u2 stopped") {
		t.Fatalf("the note does not say who stopped: %s", reqs[1].Body)
	}
}

// TestStopLetsQueuedMessagesGoOn: a message sent while the turn runs is
// answered after the stop, and the stopped request is not answered.
func TestStopLetsQueuedMessagesGoOn(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	p.llm.Enqueue(forever)
	p.router.Handle(ctx, msg("c2", "u1", "first question"))
	waitRequests(t, p, 1)
	p.router.Handle(ctx, msg("c2", "u1", "second question"))
	p.router.Handle(ctx, msg("c2", "u1", "/stop"))
	got := p.ch.WaitFor(t, "c2", 2)
	if got[0].Text != "⏹ Stopped by test:u1." {
		t.Fatalf("first message = %q, want the stop notice", got[0].Text)
	}
	if !strings.Contains(got[1].Text, "echo: second question") {
		t.Fatalf("second message = %q, want the queued message answered", got[1].Text)
	}
	if n := len(p.llm.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2", n)
	}
	if n := sentWith(p, "c2", "first question"); n != 0 {
		t.Fatalf("the stopped request was answered %d times", n)
	}
}

// TestStopWithNothingRunning: /stop when no turn runs says so.
func TestStopWithNothingRunning(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	p.router.Handle(ctx, msg("c3", "u1", "hello"))
	p.ch.WaitFor(t, "c3", 1)
	p.router.Handle(ctx, msg("c3", "u1", "/stop"))
	if got := p.ch.WaitFor(t, "c3", 2)[1].Text; got != "Nothing is running here." {
		t.Fatalf("/stop answered %q", got)
	}
	p.router.Handle(ctx, msg("c3", "u1", "/help"))
	if got := p.ch.WaitFor(t, "c3", 3)[2].Text; !strings.Contains(got, "/stop — ") {
		t.Fatalf("/help does not list /stop: %q", got)
	}
}

// gone reports whether the process pid has ended (a zombie waiting for a
// reaper counts as ended).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) STATE ...: comm may hold spaces, so read after its ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// readPID waits for file to hold a pid and returns it.
func readPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	waitUntil(t, file, func() bool {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// stopPipeline has the exec and process tools, commands allowed without
// approval, and the processes a stopped turn started stopped with it.
func stopPipeline(t *testing.T) (*pipeline, string) {
	t.Helper()
	root := t.TempDir()
	e := exec.New(exec.Options{WorkspaceRoot: root, Mode: exec.ExecModeAllow})
	procs := exec.NewProcesses(e)
	t.Cleanup(procs.Close)
	p := startPipeline(t, pipelineOptions{
		Tools:         func(*approvals.Service) []tools.Tool { return []tools.Tool{e, procs} },
		StopProcesses: procs.StopStartedSince,
	})
	return p, root
}

func toolArgs(args map[string]string) string {
	b, _ := json.Marshal(args)
	return string(b)
}

// TestStopKillsTheRunningCommand: /stop during an exec command kills the
// command and its child processes; the call gets a result (the model is
// not asked to run it again) and the chat is told.
func TestStopKillsTheRunningCommand(t *testing.T) {
	p, root := stopPipeline(t)
	ctx := context.Background()
	dir := exec.WorkspaceDir(root, "default/test:c4")
	cmd := "echo $$ > sh.pid; sleep 60 & echo $! > child.pid; wait"
	p.router.Handle(ctx, msg("c4", "u1", llmtest.CallToolMarker+"exec "+toolArgs(map[string]string{"command": cmd})))
	shell, child := readPID(t, filepath.Join(dir, "sh.pid")), readPID(t, filepath.Join(dir, "child.pid"))
	p.router.Handle(ctx, msg("c4", "u1", "/stop"))
	if got := p.ch.WaitFor(t, "c4", 1)[0].Text; got != "⏹ Stopped by test:u1." {
		t.Fatalf("chat got %q, want the stop notice", got)
	}
	waitUntil(t, "the command and its child to be killed", func() bool { return gone(shell) && gone(child) })
	p.router.Handle(ctx, msg("c4", "u1", "what now?"))
	if got := p.ch.WaitFor(t, "c4", 2)[1].Text; !strings.Contains(got, "echo: what now?") {
		t.Fatalf("next reply = %q", got)
	}
	reqs := p.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	results := 0
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			results++
		}
	}
	if results != 1 {
		t.Fatalf("the next call has %d tool results, want the stopped call's one: %+v", results, reqs[1].Messages)
	}
}

// TestStopKillsTheTurnsBackgroundProcess: a background process the
// stopped turn started is killed; one an earlier turn started keeps
// running.
func TestStopKillsTheTurnsBackgroundProcess(t *testing.T) {
	p, root := stopPipeline(t)
	ctx := context.Background()
	dir := exec.WorkspaceDir(root, "default/test:c5")
	start := func(file string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "process",
			Arguments: toolArgs(map[string]string{"action": "start", "command": "echo $$ > " + file + "; exec sleep 60"})}}}
	}
	p.llm.Enqueue(start("earlier.pid"), llmtest.Reply{Text: "started it"}, start("mine.pid"), forever)
	p.router.Handle(ctx, msg("c5", "u1", "start a server"))
	p.ch.WaitFor(t, "c5", 1)
	earlier := readPID(t, filepath.Join(dir, "earlier.pid"))
	p.router.Handle(ctx, msg("c5", "u1", "start another"))
	mine := readPID(t, filepath.Join(dir, "mine.pid"))
	waitRequests(t, p, 4)
	p.router.Handle(ctx, msg("c5", "u1", "/stop"))
	if got := p.ch.WaitFor(t, "c5", 2)[1].Text; got != "⏹ Stopped by test:u1." {
		t.Fatalf("chat got %q, want the stop notice", got)
	}
	waitUntil(t, "the stopped turn's process to be killed", func() bool { return gone(mine) })
	if gone(earlier) {
		t.Fatal("the earlier turn's background process was killed too")
	}
}

// TestStopReachesTheReplicaRunningTheTurn: /stop on a replica that does
// not run the turn reaches the one that does, over Redis; that one stops
// it and tells the chat, the other says nothing.
func TestStopReachesTheReplicaRunningTheTurn(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	replica := bot.NewRouter(bot.Options{
		History: p.db, Outbox: p.db, Recovery: p.db, Identities: p.db,
		Dedupe: p.rdb, Notice: p.rdb, Locker: p.rdb, Stops: p.rdb,
		Channels: map[string]channels.Channel{"test": newRecorder()}, Access: bot.AccessOptions{Mode: bot.AccessModeOpen},
	})
	t.Cleanup(func() { _ = replica.Close(context.Background()) })
	waitUntil(t, "the running replica to listen for stops", p.router.StopsListeningForTest)
	p.llm.Enqueue(forever)
	p.router.Handle(ctx, msg("c6", "u1", "think hard"))
	waitRequests(t, p, 1)
	if err := replica.Handle(ctx, msg("c6", "u2", "/stop")); err != nil {
		t.Fatal(err)
	}
	if got := p.ch.WaitFor(t, "c6", 1)[0].Text; got != "⏹ Stopped by test:u2." {
		t.Fatalf("chat got %q, want the stop notice", got)
	}
	waitUntil(t, "the model server to see the client go away", func() bool { return p.llm.Abandoned() == 1 })
	// Nothing runs any more: the other replica says so. Its answer goes
	// through the shared outbox, after anything it had said to the first
	// /stop, so the chat showing just these two says it said nothing then.
	if err := replica.Handle(ctx, msg("c6", "u2", "/stop")); err != nil {
		t.Fatal(err)
	}
	got := p.ch.WaitFor(t, "c6", 2)
	if got[1].Text != "Nothing is running here." || len(got) != 2 {
		t.Fatalf("chat got %+v, want the stop notice, then the second /stop's answer", got)
	}
}
