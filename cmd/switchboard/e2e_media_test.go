package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// TestE2EPhotoLandsInTheWorkspace: a Telegram photo with a caption is
// downloaded from the fake Bot API, put in the conversation's workspace
// as inbox/photo.jpg with the exact bytes, and the model reads the
// caption with the attachment line (the built daemon, scripted LLM).
func TestE2EPhotoLandsInTheWorkspace(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, nil)
	defer e.d.stop()
	const chat = 6565
	photo := "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00 a small picture"
	e.tg.AddFile("ph1", "photo.jpg", []byte(photo))
	after := lastID(e.tg, chat)
	e.tg.SendMedia(chat, chat, "what is on this screen?", telegramtest.Media{Kind: "photo", FileID: "ph1", Size: int64(len(photo))})
	line := fmt.Sprintf("[attachment: inbox/photo.jpg, image/jpeg, %d bytes]", len(photo))
	newReplyContaining(ctx, t, e.tg, chat, after, "echo: what is on this screen?")

	var read string
	for _, r := range e.llm.Requests() {
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "what is on this screen?") {
				read = m.Content
			}
		}
	}
	// The adapter's text comes first, then a line for each file.
	if !strings.HasPrefix(read, "what is on this screen?") || !strings.HasSuffix(read, "\n"+line) {
		t.Fatalf("the model read %q, want the caption and %s", read, line)
	}
	found, err := filepath.Glob(filepath.Join(e.env["SWITCHBOARD_DATA_DIR"], "workspaces", "*", "inbox", "photo.jpg"))
	if err != nil || len(found) != 1 {
		t.Fatalf("inbox/photo.jpg in the workspaces: %v, %v; want one", found, err)
	}
	if b, err := os.ReadFile(found[0]); err != nil || string(b) != photo {
		t.Fatalf("%s = %q, %v; want the photo's bytes", found[0], b, err)
	}
	// As root the daemon runs exec as nobody, who must own the file to
	// work on it.
	if os.Geteuid() == 0 {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(found[0])
		if err != nil {
			t.Fatal(err)
		}
		if uid := fmt.Sprint(fi.Sys().(*syscall.Stat_t).Uid); uid != nobody.Uid {
			t.Fatalf("%s belongs to uid %s, want exec's user nobody (%s)", found[0], uid, nobody.Uid)
		}
	}
}
