package main

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// filesIn counts the bot messages in chat that carry a file.
func filesIn(tg *telegramtest.Server, chat int64) int {
	n := 0
	for _, m := range tg.Messages(chat) {
		if m.File != "" {
			n++
		}
	}
	return n
}

// TestE2ETelegramFileOnceAcrossKill9: a file the agent sends reaches the
// chat exactly once when the daemon is killed (-9) while the file is
// being uploaded, and when it is killed after the tool queued the file
// but before the run stored the tool's result (the resumed run calls the
// tool again with the same call).
func TestE2ETelegramFileOnceAcrossKill9(top *testing.T) {
	ctx := testCtx(top, 2*time.Minute)
	e := startMediaTelegram(ctx, top)
	defer func() { e.d.stop() }()
	// The daemon outlives each subtest: restarted under the whole test.
	restart := func() { e.restart(ctx, top) }

	top.Run("KilledMidUpload", func(t *testing.T) {
		const chat = 7201
		pic := noisyPNG(t, 64, 64, 7)
		e.llm.EnqueueImage(llmtest.MediaReply{Data: pic})
		// Never released: the bytes after the stall never arrive, as on a
		// network that stalled; the fake fails the upload when it closes.
		reached, _ := e.tg.StallUpload("sendPhoto", 1000)
		after := lastID(e.tg, chat)
		e.tg.SendText(chat, chat, "Ann", `CALL_TOOL:create_image {"prompt":"static on an old TV"}`)
		select {
		case <-reached:
		case <-ctx.Done():
			t.Fatal("the photo's upload never began")
		}
		e.d.kill9()
		if n := len(e.tg.Uploads(chat)); n != 0 {
			t.Fatalf("the interrupted upload counts as %d files", n)
		}
		restart()
		// The row is sent again once the dead daemon's claim lapses
		// (postgres.OwnerTimeout after its last heartbeat).
		eventually(ctx, t, "the photo sent after the restart", func() bool { return len(e.tg.Uploads(chat)) > 0 })
		newReplyContaining(ctx, t, e.tg, chat, after, "tool create_image said: sent")
		ups := e.tg.Uploads(chat)
		if len(ups) != 1 || ups[0].Method != "sendPhoto" || !bytes.Equal(ups[0].Body, pic) || filesIn(e.tg, chat) != 1 {
			t.Fatalf("the chat got %d uploads (%d file messages); want the %d-byte photo once", len(ups), filesIn(e.tg, chat), len(pic))
		}
		waitOutboxSent(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], strconv.Itoa(chat))
	})

	top.Run("KilledBeforeTheResultWasStored", func(t *testing.T) {
		const chat = 7202
		plan := []byte("1. pack\n2. travel\n3. rest\n")
		e.tg.AddFile("tg-plan", "plan.txt", plan)
		after := lastID(e.tg, chat)
		e.tg.SendMedia(chat, chat, "keep this", telegramtest.Media{Kind: "document", FileID: "tg-plan", FileName: "plan.txt", MimeType: "text/plain", Size: int64(len(plan))})
		newReplyContaining(ctx, t, e.tg, chat, after, "echo: keep this")
		after = lastID(e.tg, chat)
		e.tg.SendText(chat, chat, "Ann", `CALL_TOOL:send_file {"path":"inbox/plan.txt"}`)
		newReplyContaining(ctx, t, e.tg, chat, after, "tool send_file said: sent")
		waitOutboxSent(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], strconv.Itoa(chat))
		e.d.kill9()
		// A kill between queueing the file and storing the tool's result
		// leaves the session ending in the step that called send_file,
		// the file's row queued (here sent too) and nothing after it.
		rewindToToolStep(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], "default/telegram:"+strconv.Itoa(chat), "send_file")
		after = lastID(e.tg, chat)
		restart()
		newReplyContaining(ctx, t, e.tg, chat, after, "tool send_file said: sent")
		if ups := e.tg.Uploads(chat); len(ups) != 1 || !bytes.Equal(ups[0].Body, plan) || filesIn(e.tg, chat) != 1 {
			t.Fatalf("the chat got %d uploads (%d file messages); want plan.txt once", len(ups), filesIn(e.tg, chat))
		}
		if n := outboxFileRows(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], strconv.Itoa(chat)); n != 1 {
			t.Fatalf("the resumed call queued the file again: %d file rows", n)
		}
	})
}

// rewindToToolStep puts session back where a crash right after its newest
// call of tool ran, and before the call's result was stored, leaves it:
// the result and everything after it (and their replies' outbox rows)
// gone, the session's last seq at the step that made the call.
func rewindToToolStep(ctx context.Context, t *testing.T, dbURL, session, tool string) {
	t.Helper()
	db := openDB(ctx, t, dbURL)
	var step int64
	err := db.QueryRow(ctx, `SELECT max(seq) FROM messages WHERE session_key = $1 AND role = 'assistant'
		AND seq < (SELECT max(seq) FROM messages WHERE session_key = $1 AND role = 'tool' AND tool_name = $2)`,
		session, tool).Scan(&step)
	if err != nil {
		t.Fatalf("find the step that called %s in %s: %v", tool, session, err)
	}
	for _, q := range []string{
		`DELETE FROM messages WHERE session_key = $1 AND seq > $2`,
		`DELETE FROM outbox WHERE session_key = $1 AND source_seq > $2`,
		`UPDATE sessions SET last_seq = $2 WHERE key = $1`,
	} {
		if _, err := db.Exec(ctx, q, session, step); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
