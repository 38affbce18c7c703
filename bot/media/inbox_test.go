package media_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestMediaPutInInbox(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	body := "2026-01-01 ERROR disk full\n"
	s, err := media.Fetch(ctx, attachment("../../etc/app.log", strings.NewReader(body), nil), "", 1000, db)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "workspace")
	var got []string
	for range 3 {
		rel, err := media.PutInInbox(ctx, dir, s, db)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rel)
	}
	want := []string{"inbox/app.log", "inbox/app (2).log", "inbox/app (3).log"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("PutInInbox three times = %q, want %q", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, got[1]))
	if err != nil || string(data) != body {
		t.Fatalf("%s = %q, %v; want %q", got[1], data, err, body)
	}
	for path, mode := range map[string]os.FileMode{"inbox": os.ModeDir | 0o700, got[0]: 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, path)); err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode(), err, mode)
		}
	}

	noExt := s
	noExt.Name = "Makefile"
	for _, want := range []string{"inbox/Makefile", "inbox/Makefile (2)"} {
		if rel, err := media.PutInInbox(ctx, dir, noExt, db); err != nil || rel != want {
			t.Fatalf("PutInInbox of Makefile = %q, %v; want %q", rel, err, want)
		}
	}

	unknown := media.Stored{SHA256: strings.Repeat("0", 64), Name: "gone.txt"}
	if _, err := media.PutInInbox(ctx, dir, unknown, db); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("PutInInbox of an unknown file = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "inbox", "gone.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed PutInInbox left inbox/gone.txt behind (%v)", err)
	}
}

func TestMediaPutInInboxStaysInTheWorkspace(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s, err := media.Fetch(ctx, attachment("x.txt", strings.NewReader("payload"), nil), "", 1000, db)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "workspace")
	for _, d := range []string{outside, dir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A tool in the workspace may have made inbox a link to elsewhere.
	if err := os.Symlink(outside, filepath.Join(dir, "inbox")); err != nil {
		t.Fatal(err)
	}
	if rel, err := media.PutInInbox(ctx, dir, s, db); err == nil {
		t.Fatalf("PutInInbox through a symlinked inbox = %q, want an error", rel)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("PutInInbox wrote outside the workspace: %v", entries)
	}

	// A file named like the attachment that links out is not followed.
	if err := os.Remove(filepath.Join(dir, "inbox")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "inbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.txt"), filepath.Join(dir, "inbox", "x.txt")); err != nil {
		t.Fatal(err)
	}
	rel, err := media.PutInInbox(ctx, dir, media.Stored{SHA256: s.SHA256, Name: "../../outside/x.txt"}, db)
	if err != nil || rel != "inbox/x (2).txt" {
		t.Fatalf("PutInInbox beside a dangling link = %q, %v; want inbox/x (2).txt", rel, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link was followed out of the workspace (%v)", err)
	}
}

func TestMediaRemoveInbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := os.MkdirAll(filepath.Join(dir, "inbox", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"inbox/photo.jpg", "inbox/sub/x.txt", "notes.md"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := media.RemoveInbox(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "inbox")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("inbox still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.md")); err != nil {
		t.Errorf("the agent's own file went too: %v", err)
	}
	// An inbox that is a link to elsewhere: only the link goes.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "inbox")); err != nil {
		t.Fatal(err)
	}
	if err := media.RemoveInbox(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep.txt")); err != nil {
		t.Errorf("a file outside the workspace was removed through a link: %v", err)
	}
	if err := media.RemoveInbox(filepath.Join(t.TempDir(), "never-made")); err != nil {
		t.Errorf("a workspace never made: %v", err)
	}
}
