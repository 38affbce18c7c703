package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// sleepingProcesses counts the processes whose command line holds arg.
func sleepingProcesses(t *testing.T, arg string) int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), arg) {
			n++
		}
	}
	return n
}

// TestE2EStop: /stop ends the chat's running turn at once — a model call
// streaming its answer (the request is cancelled; the answer shown so far
// stays, saying who stopped it) and a running command (its processes are
// killed) — and the chat's next message is answered as usual.
func TestE2EStop(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) {
		maps.Copy(env, streamOn)
		env["SWITCHBOARD_EXEC_APPROVAL"] = "allow"
	})
	tg, llm := e.tg, e.llm

	t.Run("DuringAModelCall", func(t *testing.T) {
		const chat = 7301
		paced(llm, pacedWords("long", 200), 100*time.Millisecond) // 20 s
		tg.SendText(chat, chat, "Ann", "tell me everything")
		eventually(ctx, t, "the answer streaming", func() bool {
			ds := tg.Drafts(chat)
			return len(ds) > 0 && strings.Contains(ds[len(ds)-1].Visible, "long3")
		})
		abandoned := llm.Abandoned()
		stopAt := time.Now()
		tg.SendText(chat, chat, "Ann", "/stop")
		answers, err := waitAnswers(ctx, tg, chat, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := answers[0].Visible
		if !strings.HasPrefix(got, "long1 long2 long3") || !strings.HasSuffix(got, "⏹ Stopped by telegram:7301.") {
			t.Fatalf("stopped answer = %q, want what was said so far, then who stopped it", got)
		}
		if d := time.Since(stopAt); d > 5*time.Second {
			t.Fatalf("stopped after %s, want at once", d)
		}
		eventually(ctx, t, "the model request cancelled", func() bool { return llm.Abandoned() > abandoned })
		tg.SendText(chat, chat, "Ann", "SAY: still here")
		eventually(ctx, t, "the next message answered", func() bool {
			return slices.Contains(tgShown(tg, chat), "still here")
		})
		if n := len(tgShown(tg, chat)); n != 2 {
			t.Fatalf("chat shows %q, want the stopped answer and the next one", tgShown(tg, chat))
		}
	})

	t.Run("DuringACommand", func(t *testing.T) {
		const chat = 7302
		const marker = "617.25"
		llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "exec",
			Arguments: `{"command":"sleep ` + marker + ` & sleep ` + marker + `"}`}}})
		tg.SendText(chat, chat, "Ann", "run it")
		eventually(ctx, t, "the command running", func() bool { return sleepingProcesses(t, "sleep "+marker) >= 2 })
		tg.SendText(chat, chat, "Ann", "/stop")
		answers, err := waitAnswers(ctx, tg, chat, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(answers[len(answers)-1].Visible, "⏹ Stopped by telegram:7302.") {
			t.Fatalf("chat shows %q, want the stop notice", tgShown(tg, chat))
		}
		eventually(ctx, t, "the command and its child killed", func() bool { return sleepingProcesses(t, "sleep "+marker) == 0 })
		// The model is told, on the next turn, that the command was stopped.
		tg.SendText(chat, chat, "Ann", "what happened?")
		eventually(ctx, t, "the next turn's request", func() bool {
			reqs := llm.Requests()
			last := reqs[len(reqs)-1]
			return slices.ContainsFunc(last.Messages, func(m llmtest.Message) bool { return strings.Contains(m.Content, "what happened?") })
		})
		last := llm.Requests()[len(llm.Requests())-1]
		if !slices.ContainsFunc(last.Messages, func(m llmtest.Message) bool { return strings.Contains(m.Content, "[Stopped] telegram:7302 stopped") }) {
			t.Fatalf("the model was not told of the stop: %+v", last.Messages)
		}
	})
}
