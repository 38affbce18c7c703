package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// namesAnswered answers with the user messages that came after the last
// assistant message, so each reply says exactly which messages it answers
// (under conversation.queue=steer one reply may answer several).
func namesAnswered(req llmtest.Request) llmtest.Reply {
	var names []string
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			names = names[:0]
		case "user":
			names = append(names, m.Content)
		}
	}
	return llmtest.Reply{Text: "answered: " + strings.Join(names, " | ")}
}

// loadCounts tallies, over chats, how often each message was answered.
func loadCounts(tg *telegramtest.Server, chats int) map[string]int {
	seen := map[string]int{}
	for c := range chats {
		for _, m := range tg.Messages(int64(5000 + c)) {
			rest, ok := strings.CutPrefix(m.Visible, "answered: ")
			if !ok {
				continue
			}
			for _, name := range strings.Split(rest, " | ") {
				seen[name]++
			}
		}
	}
	return seen
}

// faultLoad sends chats×perChat messages to a model that takes think per
// call, lets fault strike once `at` messages are answered, restarts the daemon and waits until every message
// is answered. It returns the messages answered more than once and how many
// were answered before the fault.
func faultLoad(t *testing.T, chats, perChat, at int, think time.Duration, fault func(d *daemonProc)) (dups []string, before int) {
	ctx := testCtx(t, 4*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) {
		env["SWITCHBOARD_RATELIMIT_USER"] = "off"
		env["SWITCHBOARD_RATELIMIT_CHAT"] = "off"
		env["SWITCHBOARD_LOG_LEVEL"] = "info"
	})
	tg := e.tg
	e.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		time.Sleep(think) // the model thinks: runs are in flight when the fault strikes
		return namesAnswered(req)
	})

	total := chats * perChat
	for i := range perChat {
		for c := range chats {
			tg.SendText(int64(5000+c), int64(100+c), "User", fmt.Sprintf("c%d-m%d", c, i))
		}
	}
	for len(loadCounts(tg, chats)) < at {
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d answered before the fault", len(loadCounts(tg, chats)), total)
		}
		time.Sleep(5 * time.Millisecond)
	}
	fault(e.d)
	before = len(loadCounts(tg, chats))
	restart := time.Now()
	e.restart(ctx, t)
	// Recovery takes a few seconds (stale locks, RecoverOlderThan); 30 s
	// without any new answer means the rest are lost.
	progress, lastCount := time.Now(), -1
	for {
		seen := loadCounts(tg, chats)
		if len(seen) == total {
			break
		}
		if len(seen) != lastCount {
			progress, lastCount = time.Now(), len(seen)
		}
		if ctx.Err() != nil || time.Since(progress) > 30*time.Second {
			var lost []string
			for c := range chats {
				for i := range perChat {
					if name := fmt.Sprintf("c%d-m%d", c, i); seen[name] == 0 {
						lost = append(lost, name)
					}
				}
			}
			t.Fatalf("%d of %d messages never answered (lost), e.g. %q\n--- stored ---\n%s\n--- log of the restarted daemon ---\n%s",
				len(lost), total, lost[:min(10, len(lost))], storedOf(e.env["SWITCHBOARD_DATABASE_URL"], lost), logTail(e.d.out.String(), lost))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d answered before the fault, all %d answered %s after the restart", before, total, time.Since(restart).Round(time.Millisecond))
	time.Sleep(time.Second) // a late duplicate shows up here
	// A double is the same answer sent twice to a chat (one answer may
	// name several messages).
	for c := range chats {
		sent := map[string]int{}
		for _, m := range tg.Messages(int64(5000 + c)) {
			if strings.HasPrefix(m.Visible, "answered: ") {
				sent[m.Visible]++
			}
		}
		for text, n := range sent {
			if n > 1 {
				dups = append(dups, fmt.Sprintf("c%d %q×%d", c, strings.TrimPrefix(text, "answered: "), n))
			}
		}
	}
	return dups, before
}

// Done-when 4: kill -9 in the middle of 1 000 messages loses none; the
// only duplicates are sends that were in flight when the process died.
func TestE2EKill9UnderLoadLosesNothing(t *testing.T) {
	dups, _ := faultLoad(t, 100, 10, 400, 20*time.Millisecond, func(d *daemonProc) { d.kill9() })
	t.Logf("answers sent twice (in flight at the kill): %d %v", len(dups), dups)
	// Each chat's worker has at most one send in flight (sent, not yet
	// marked sent), so each chat may get at most one answer twice.
	perChat := map[string]int{}
	for _, d := range dups {
		chat, _, _ := strings.Cut(d, " ")
		if perChat[chat]++; perChat[chat] > 1 {
			t.Errorf("chat %s got more than one answer twice: only one send per chat can be in flight", chat)
		}
	}
}

// Done-when 7: SIGTERM with messages in flight: nothing lost, nothing
// answered twice, and the process stops within the 10 s a container
// runtime gives it.
func TestE2ESigtermInFlightLosesNothing(t *testing.T) {
	var took time.Duration
	dups, _ := faultLoad(t, 100, 2, 20, 3*time.Second, func(d *daemonProc) {
		start := time.Now()
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if _, err := d.wait(testCtx(t, 20*time.Second)); err != nil {
			t.Fatalf("after SIGTERM: %v", err)
		}
		took = time.Since(start)
	})
	t.Logf("shutdown took %s", took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("shutdown took %s, more than 10 s", took)
	}
	if len(dups) > 0 {
		t.Fatalf("answered twice after a clean shutdown: %v", dups)
	}
}

// logTail keeps the log lines that matter for a lost message: warnings,
// errors, and lines naming the chats of the lost messages.
func logTail(log string, lost []string) string {
	var keep []string
	for _, line := range strings.Split(log, "\n") {
		hit := strings.Contains(line, "WARN") || strings.Contains(line, "ERROR")
		for _, name := range lost[:min(3, len(lost))] {
			chat, _, _ := strings.Cut(name, "-")
			hit = hit || strings.Contains(line, "telegram:"+fmt.Sprint(5000+atoiOr0(chat[1:]))+" ")
		}
		if hit {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep[:min(80, len(keep))], "\n")
}

func atoiOr0(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// storedOf lists the stored messages and outbox rows of the chats of the
// first lost messages, to tell where they stopped.
func storedOf(dbURL string, lost []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err.Error()
	}
	defer db.Close(ctx)
	var b strings.Builder
	for _, name := range lost[:min(3, len(lost))] {
		chat, _, _ := strings.Cut(name, "-")
		session := fmt.Sprintf("default/telegram:%d", 5000+atoiOr0(chat[1:]))
		rows, err := db.Query(ctx, `SELECT seq, role, left(content, 60), coalesce(external_id, ''), created_at FROM messages WHERE session_key = $1 ORDER BY seq`, session)
		if err != nil {
			return err.Error()
		}
		for rows.Next() {
			var seq int64
			var role, content, ext string
			var at time.Time
			_ = rows.Scan(&seq, &role, &content, &ext, &at)
			fmt.Fprintf(&b, "%s %3d %-9s %-40q %s %s\n", session, seq, role, content, ext, at.Format("15:04:05.000"))
		}
		rows.Close()
		rows, err = db.Query(ctx, `SELECT id, source_seq, status, attempts, left(text, 60) FROM outbox WHERE session_key = $1 ORDER BY id`, session)
		if err != nil {
			return err.Error()
		}
		for rows.Next() {
			var id, seq int64
			var attempts int
			var status, text string
			_ = rows.Scan(&id, &seq, &status, &attempts, &text)
			fmt.Fprintf(&b, "  outbox %d seq=%d %s attempts=%d %q\n", id, seq, status, attempts, text)
		}
		rows.Close()
	}
	return b.String()
}
