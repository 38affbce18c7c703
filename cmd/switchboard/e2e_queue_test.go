package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// burstTexts are the three messages of a burst. The first asks for a tool,
// so the burst arrives mid-turn: steer takes it in at the next model call,
// followup and collect only after the turn's reply.
var burstTexts = []string{"burst one CALL_TOOL:datetime", "burst two", "burst three"}

// burstModel is a model that takes 2 s per call and names in each final
// reply the user messages it answers: those after its last final reply.
// Its first call also waits for gate, which the test closes once the whole
// burst is stored, so the burst always lands while the model works.
type burstModel struct {
	gate  chan struct{}
	calls atomic.Int32
}

func (b *burstModel) reply(req llmtest.Request) llmtest.Reply {
	if b.calls.Add(1) == 1 {
		select {
		case <-b.gate:
		case <-time.After(time.Minute):
		}
	}
	var open []string
	for _, m := range req.Messages {
		switch {
		case m.Role == "assistant" && len(m.ToolCalls) == 0:
			open = nil
		case m.Role == "user":
			open = append(open, m.Content)
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "user" && strings.Contains(last.Content, "CALL_TOOL:datetime") {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "datetime", Arguments: "{}"}}, Delay: 2 * time.Second}
	}
	return llmtest.Reply{Text: "answered: " + strings.Join(open, " | "), Delay: 2 * time.Second}
}

// isProgress reports whether m is a run's "working…" note (deleted or
// closed when the run ends), not an answer.
func isProgress(m telegramtest.Message) bool {
	return strings.HasPrefix(m.Visible, "⏳ working") || m.Visible == "✓ done"
}

// answers returns the bot's answers in chat, oldest first, without
// progress notes.
func answers(tg *telegramtest.Server, chat int64) []string {
	var out []string
	for _, m := range tg.Messages(chat) {
		if !isProgress(m) {
			out = append(out, m.Visible)
		}
	}
	return out
}

// userTexts returns the user messages of a model request.
func userTexts(req llmtest.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// storedUserMessages counts the user messages of the burst in the database.
func storedUserMessages(ctx context.Context, t *testing.T, db *pgx.Conn) int {
	t.Helper()
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM messages WHERE role = 'user' AND content LIKE 'burst %'`).Scan(&n); err != nil {
		t.Fatalf("count stored messages: %v", err)
	}
	return n
}

// TestE2EBurstEveryQueueMode: three messages 200 ms apart to one chat while
// the model takes 2 s a call. In every queue mode each message reaches the
// model, the last answer comes after (and names) the last message, and no
// message is answered twice; each mode groups the burst its own way.
func TestE2EBurstEveryQueueMode(t *testing.T) {
	tests := []struct {
		mode string
		// want is what each answer names, in order (indexes of burstTexts).
		want [][]int
		// check looks at the model requests of the mode.
		check func(t *testing.T, reqs []llmtest.Request)
	}{
		{"steer", [][]int{{0, 1, 2}}, func(t *testing.T, reqs []llmtest.Request) {
			// The burst arrived during the first call: the very next
			// call, right after the tool result, sees it.
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2 (tool call, then one answer to all)", len(reqs))
			}
			if got := userTexts(reqs[1]); !slices.Equal(got, burstTexts) {
				t.Fatalf("second call saw user messages %q, want the whole burst", got)
			}
		}},
		{"followup", [][]int{{0}, {1}, {2}}, func(t *testing.T, reqs []llmtest.Request) {
			// One turn per message, in order.
			if len(reqs) != 4 {
				t.Fatalf("%d model calls, want 4", len(reqs))
			}
			for i, want := range [][]string{burstTexts[:1], burstTexts[:1], burstTexts[:2], burstTexts} {
				if got := userTexts(reqs[i]); !slices.Equal(got, want) {
					t.Fatalf("call %d saw user messages %q, want %q", i+1, got, want)
				}
			}
		}},
		{"collect", [][]int{{0}, {1, 2}}, func(t *testing.T, reqs []llmtest.Request) {
			// The first turn ends without the burst; the 2nd and 3rd
			// messages then go to the model together.
			if len(reqs) != 3 {
				t.Fatalf("%d model calls, want 3", len(reqs))
			}
			for i, want := range [][]string{burstTexts[:1], burstTexts[:1], burstTexts} {
				if got := userTexts(reqs[i]); !slices.Equal(got, want) {
					t.Fatalf("call %d saw user messages %q, want %q", i+1, got, want)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			ctx := testCtx(t, 2*time.Minute)
			e := startTelegramE2E(ctx, t, func(env map[string]string) { env["SWITCHBOARD_CONVERSATION_QUEUE"] = tt.mode })
			tg, llm, env := e.tg, e.llm, e.env
			model := &burstModel{gate: make(chan struct{})}
			llm.Handle(model.reply)
			db, err := pgx.Connect(ctx, env["SWITCHBOARD_DATABASE_URL"])
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close(context.WithoutCancel(ctx))

			const chat = 1301
			sent := time.Now()
			tg.SendText(chat, chat, "Bea", burstTexts[0])
			// The rest of the burst follows once the model works on the
			// first message (so it cannot arrive with it), 200 ms apart.
			for len(llm.Requests()) == 0 {
				select {
				case <-ctx.Done():
					t.Fatal("the first message never reached the model")
				case <-time.After(10 * time.Millisecond):
				}
			}
			time.Sleep(time.Until(sent.Add(200 * time.Millisecond)))
			tg.SendText(chat, chat, "Bea", burstTexts[1])
			time.Sleep(200 * time.Millisecond)
			tg.SendText(chat, chat, "Bea", burstTexts[2])
			for storedUserMessages(ctx, t, db) < len(burstTexts) {
				select {
				case <-ctx.Done():
					t.Fatal("the burst was never stored")
				case <-time.After(20 * time.Millisecond):
				}
			}
			close(model.gate)

			// Wait for the answer to the last message, then a moment for a
			// (wrong) extra answer to show up.
			for !slices.ContainsFunc(answers(tg, chat), func(s string) bool { return strings.Contains(s, burstTexts[2]) }) {
				select {
				case <-ctx.Done():
					t.Fatalf("the last message was never answered; chat has %q", answers(tg, chat))
				case <-time.After(20 * time.Millisecond):
				}
			}
			t.Logf("burst answered %.1f s after the first message", time.Since(sent).Seconds())
			time.Sleep(time.Second)

			got := answers(tg, chat)
			var want []string
			for _, idx := range tt.want {
				var names []string
				for _, i := range idx {
					names = append(names, burstTexts[i])
				}
				want = append(want, "answered: "+strings.Join(names, " | "))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("answers in the chat:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Each message is named by exactly one answer (the slices
			// above are equal, but say it in the terms of the goal).
			for _, text := range burstTexts {
				n := 0
				for _, a := range got {
					if strings.Contains(a, text) {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("%q answered %d times", text, n)
				}
			}
			reqs := llm.Requests()
			for _, text := range burstTexts {
				if !slices.ContainsFunc(reqs, func(r llmtest.Request) bool { return slices.Contains(userTexts(r), text) }) {
					t.Fatalf("%q never reached the model", text)
				}
			}
			tt.check(t, reqs)
			var replyTo []string
			for _, m := range tg.Messages(chat) {
				replyTo = append(replyTo, fmt.Sprintf("%d→%d", m.ID, m.ReplyTo))
			}
			t.Logf("%d model calls; answers (id→reply_to): %s", len(reqs), strings.Join(replyTo, " "))
		})
	}
}
