package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

// execPipeline is a pipeline whose agent has the exec tool in ask mode,
// with approvals by test:boss; workspace is exec's workspace root.
type execPipeline struct {
	*pipeline
	workspace string
}

func newExecPipeline(t *testing.T, lanes bot.LaneOptions) *execPipeline {
	t.Helper()
	root := t.TempDir()
	p := startPipeline(t, pipelineOptions{
		Access: bot.AccessOptions{Mode: bot.AccessModeOpen, Admins: []string{"test:boss"}}, Lanes: lanes,
		Tools: func(approvals *approvals.Service) []tools.Tool {
			return []tools.Tool{exec.New(exec.Options{WorkspaceRoot: root, Mode: exec.ExecModeAsk, Approver: approvals})}
		},
	})
	return &execPipeline{pipeline: p, workspace: root}
}

func execCall(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return llmtest.CallToolMarker + "exec " + string(b)
}

// A run waiting for an approval holds nothing: the chat answers a new
// message at once with what is waiting, /cancel withdraws the request, the
// model is told, and the command never runs.
func TestParkedApprovalAnswersAndCancels(t *testing.T) {
	p := newExecPipeline(t, bot.LaneOptions{})
	ctx := context.Background()
	p.router.Handle(ctx, msg("work", "dev", execCall("touch canary")))
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	if note := p.ch.WaitFor(t, "work", 1)[0]; !strings.Contains(note.Text, "Waiting for an approver") {
		t.Fatalf("requester note = %q", note.Text)
	}

	p.router.Handle(ctx, msg("work", "dev", "are you still there?"))
	got := p.ch.WaitFor(t, "work", 2)[1]
	if !strings.Contains(got.Text, "waiting for an admin to approve") || !strings.Contains(got.Text, "touch canary") ||
		!strings.Contains(got.Text, "/cancel") {
		t.Fatalf("answer while parked = %q", got.Text)
	}

	p.router.Handle(ctx, msg("work", "dev", "/cancel"))
	if got := p.ch.WaitFor(t, "work", 3)[2]; !strings.Contains(got.Text, "Withdrawn") {
		t.Fatalf("/cancel answer = %q", got.Text)
	}
	if e := p.ch.waitEdit(t, p.ch.IDOf("boss", 0)); !strings.Contains(e, "Withdrawn by test:dev") {
		t.Fatalf("approver message after /cancel = %q", e)
	}
	// The resumed run tells the model and answers the waiting message.
	reply := p.ch.WaitFor(t, "work", 4)[3]
	if !strings.Contains(reply.Text, "are you still there?") {
		t.Fatalf("reply after /cancel = %q", reply.Text)
	}
	reqs := p.llm.Requests()
	last := reqs[len(reqs)-1]
	var toolResult string
	for _, m := range last.Messages {
		if m.Role == "tool" {
			toolResult = m.Content
		}
	}
	if !strings.Contains(toolResult, "cancelled by the user") {
		t.Fatalf("the model was told %q, want the cancellation", toolResult)
	}
	if _, err := os.Stat(filepath.Join(exec.WorkspaceDir(p.workspace, "default/test:work"), "canary")); err == nil {
		t.Fatal("the withdrawn command ran")
	}
	// A press after the withdrawal changes nothing.
	p.router.Handle(ctx, press(p.pipeline, "boss", "boss", buttonData(t, ask, "Allow once"), 0))
	if a := p.ch.lastAnswer(); !strings.Contains(a, "Already decided") {
		t.Fatalf("press after /cancel answered %q", a)
	}
}

// 100 runs parked on approvals in 100 chats leave the lanes free: a 101st
// chat is answered while all of them still wait.
func TestHundredPendingApprovalsDoNotDelayOtherChats(t *testing.T) {
	p := newExecPipeline(t, bot.LaneOptions{Workers: 16})
	ctx := context.Background()
	const parked = 100
	for i := range parked {
		p.router.Handle(ctx, msg(fmt.Sprint("chat", i), fmt.Sprint("u", i), execCall(fmt.Sprintf("touch f%d", i))))
	}
	p.ch.WaitFor(t, "boss", parked)
	start := time.Now()
	p.router.Handle(ctx, msg("other", "someone", "hello"))
	reply := p.ch.WaitFor(t, "other", 1)[0]
	took := time.Since(start)
	if !strings.Contains(reply.Text, "echo: hello") {
		t.Fatalf("reply = %q", reply.Text)
	}
	list, err := p.db.PendingApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != parked {
		t.Fatalf("%d approvals pending, want all %d still waiting", len(list), parked)
	}
	t.Logf("with %d approvals pending (16 lane workers), another chat was answered in %s", parked, took)
}

// A model server that numbers every reply's calls from call_0 cannot make
// an "Allow once" run a second time: the repeat asks again.
func TestAllowOnceWithReplayedToolCallIDs(t *testing.T) {
	p := newExecPipeline(t, bot.LaneOptions{})
	ctx := context.Background()
	p.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply{Text: "ran: " + last.Content}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_0", Name: "exec", Arguments: `{"command":"echo run >> log.txt"}`}}}
	})
	p.router.Handle(ctx, msg("work", "dev", "log a run"))
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	p.router.Handle(ctx, press(p.pipeline, "boss", "boss", buttonData(t, ask, "Allow once"), 0))
	var reply channels.Outbound
	for i := 1; ; i++ { // the requester note comes first
		reply = p.ch.WaitFor(t, "work", i+1)[i]
		if strings.HasPrefix(reply.Text, "ran:") {
			break
		}
	}
	p.router.Handle(ctx, msg("work", "dev", "again please"))
	second := p.ch.WaitFor(t, "boss", 2)[1]
	if !strings.Contains(second.Text, "echo run >> log.txt") {
		t.Fatalf("second approval request = %q", second.Text)
	}
	log, err := os.ReadFile(filepath.Join(exec.WorkspaceDir(p.workspace, "default/test:work"), "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "run\n"); n != 1 {
		t.Fatalf("the command ran %d times on one allow-once", n)
	}
	var used int
	if err := p.db.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'approval.used'`).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used != 1 {
		t.Fatalf("audit log: %d executions, want 1", used)
	}
}

// A command with invisible characters (a bidi override, a zero-width
// space) is shown to the approver, in /approvals and in the decided
// message exactly as it would run: the characters as ⟨U+…⟩, with a warning.
func TestApprovalShowsInvisibleCharacters(t *testing.T) {
	p := newExecPipeline(t, bot.LaneOptions{})
	ctx := context.Background()
	p.router.Handle(ctx, msg("work", "dev", execCall("echo safe\u202e fr- mr\u200b")))
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	for _, want := range []string{"⟨U+202E⟩", "⟨U+200B⟩", "exactly this text would run"} {
		if !strings.Contains(ask.Text, want) {
			t.Fatalf("approval message lacks %q: %q", want, ask.Text)
		}
	}
	if strings.ContainsRune(ask.Text, '\u202e') {
		t.Fatalf("approval message carries the raw bidi override: %q", ask.Text)
	}
	p.router.Handle(ctx, msg("boss", "boss", "/approvals"))
	if list := p.ch.WaitFor(t, "boss", 2)[1]; !strings.Contains(list.Text, "⟨U+202E⟩") || !strings.Contains(list.Text, "exactly this text would run") {
		t.Fatalf("/approvals = %q", list.Text)
	}
	p.router.Handle(ctx, press(p.pipeline, "boss", "boss", buttonData(t, ask, "Deny"), 0))
	if e := p.ch.waitEdit(t, p.ch.IDOf("boss", 0)); !strings.Contains(e, "⟨U+202E⟩") {
		t.Fatalf("decided message = %q", e)
	}
}
