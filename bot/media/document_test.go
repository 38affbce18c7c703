package media_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/media/mediatest"
)

// needTool skips a test when the program is absent on a developer's
// machine; in CI (CI set) it must be installed, so the test fails instead.
func needTool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; CI must install the Debian package %s", name, pkg)
		}
		t.Skipf("%s is not installed (apt-get install %s)", name, pkg)
	}
}

// tempFile writes data to a file and opens it.
func tempFile(t *testing.T, name string, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestMediaReadDocumentPDF(t *testing.T) {
	needTool(t, "pdftotext", "poppler-utils")
	ctx := context.Background()
	f := tempFile(t, "r.pdf", mediatest.MinimalPDF("Quarterly revenue grew", "Costs fell by a third", "Outlook is stable"))
	if typ := media.Sniff(mediatest.MinimalPDF("x"), "r.pdf"); typ != "application/pdf" {
		t.Fatalf("Sniff of the test PDF = %q", typ)
	}
	all, err := media.ReadDocument(ctx, f, "application/pdf", media.Window{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[page 1]\nQuarterly revenue grew", "[page 2]\nCosts fell by a third", "[page 3]\nOutlook is stable"} {
		if !strings.Contains(all.Text, want) {
			t.Errorf("PDF text %q lacks %q", all.Text, want)
		}
	}
	if all.More {
		t.Errorf("a short PDF read whole says there is more")
	}

	two, err := media.ReadDocument(ctx, f, "application/pdf", media.Window{FirstPage: 2, LastPage: 2})
	if err != nil || !strings.Contains(two.Text, "Costs fell") || strings.Contains(two.Text, "Quarterly") || strings.Contains(two.Text, "Outlook") {
		t.Fatalf("page 2 = %q, %v; want only page 2", two.Text, err)
	}

	// Reading on from where a short window stops gives the rest exactly.
	var got strings.Builder
	w := media.Window{Limit: 15}
	for range 20 {
		ex, err := media.ReadDocument(ctx, f, "application/pdf", w)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(ex.Text)
		if !ex.More {
			break
		}
		w = media.Window{FirstPage: ex.NextPage, Offset: ex.NextOffset, Limit: 15}
	}
	if got.String() != all.Text {
		t.Fatalf("read on 15 characters at a time = %q, want %q", got.String(), all.Text)
	}
}

func TestMediaReadDocumentHostilePDF(t *testing.T) {
	needTool(t, "pdftotext", "poppler-utils")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := tempFile(t, "x.pdf", []byte("#!/bin/sh\nrm -rf / \n"))
	_, err := media.ReadDocument(ctx, script, "application/pdf", media.Window{})
	if err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("a shell script read as a PDF = %v, want a clear error", err)
	}
	pdf := tempFile(t, "r.pdf", mediatest.MinimalPDF("one"))
	if _, err := media.ReadDocument(ctx, pdf, "application/pdf", media.Window{FirstPage: 9}); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("page 9 of a one-page PDF = %v, want an error", err)
	}
}

func TestMediaReadDocumentText(t *testing.T) {
	ctx := context.Background()
	f := tempFile(t, "notes.md", []byte("# Título\nbad \xff byte\n"))
	ex, err := media.ReadDocument(ctx, f, "text/markdown", media.Window{})
	if err != nil || ex.Text != "# Título\nbad \uFFFD byte\n" || ex.More {
		t.Fatalf("ReadDocument = %+v, %v", ex, err)
	}
	part, err := media.ReadDocument(ctx, f, "text/markdown", media.Window{Offset: 2, Limit: 6})
	if err != nil || part.Text != "Título" || !part.More || part.NextOffset != 8 || part.NextPage != 0 {
		t.Fatalf("characters 2..8 = %+v, %v; want Título, more from 8", part, err)
	}
	if _, err := media.ReadDocument(ctx, f, "text/markdown", media.Window{FirstPage: 2}); err == nil {
		t.Fatal("pages of a text file were accepted")
	}
	if _, err := media.ReadDocument(ctx, f, "image/png", media.Window{}); !errors.Is(err, media.ErrNotDocument) {
		t.Fatalf("an image read as a document = %v, want ErrNotDocument", err)
	}
}

func TestMediaDocumentTextBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	big := strings.Repeat("é", media.DocumentLimit+10)
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox", "big.txt"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	ex, err := media.DocumentText(ctx, dir, "inbox/big.txt", "text/plain")
	if err != nil || !ex.More || ex.Text != strings.Repeat("é", media.DocumentLimit) {
		t.Fatalf("DocumentText of %d characters = %d characters, more %v, %v; want the first %d and more", media.DocumentLimit+10, len([]rune(ex.Text)), ex.More, err, media.DocumentLimit)
	}
	if got, want := media.ReadOn("inbox/big.txt", ex), `[more: read on with read_document {"offset":20000,"path":"inbox/big.txt"}]`; got != want {
		t.Fatalf("ReadOn = %s, want %s", got, want)
	}
	if _, err := media.DocumentText(ctx, dir, "../big.txt", "text/plain"); err == nil {
		t.Fatal("DocumentText read a path outside the workspace")
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "inbox", "pipe.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := media.DocumentText(ctx, dir, "inbox/pipe.txt", "text/plain"); err == nil {
		t.Fatal("DocumentText of a FIFO did not refuse it")
	}
}
