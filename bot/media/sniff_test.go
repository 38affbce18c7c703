package media_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/bot/media"
)

func TestMediaSniff(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	tests := []struct {
		head []byte
		name string
		want string
	}{
		{png, "photo.png", "image/png"},
		{png, "notes.md", "image/png"},
		{[]byte("#!/bin/sh\nrm -rf /\n"), "photo.png", "text/plain"},
		{[]byte("# Title\n\nsome text"), "README.md", "text/markdown"},
		{[]byte("# Title\n"), "README.MARKDOWN", "text/markdown"},
		{[]byte("a,b\n1,2\n"), "data.csv", "text/csv"},
		{[]byte(`{"a": 1}`), "data.json", "application/json"},
		{[]byte("package main\n"), "main.go", "text/plain"},
		{[]byte("%PDF-1.7\n"), "doc.txt", "application/pdf"},
		{[]byte("<html><body>x"), "page.md", "text/html"},
		{[]byte{0, 1, 2, 3, 0xff}, "data.json", "application/octet-stream"},
	}
	for _, tc := range tests {
		if got := media.Sniff(tc.head, tc.name); got != tc.want {
			t.Errorf("Sniff(%q, %q) = %q, want %q", tc.head, tc.name, got, tc.want)
		}
	}
}

func TestMediaLine(t *testing.T) {
	if got, want := media.Line("inbox/report.pdf", "application/pdf", 3_400_000), "[attachment: inbox/report.pdf, application/pdf, 3.4 MB]"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	sizes := map[int64]string{
		0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1 KB", 1500: "1.5 KB", 12_345: "12 KB",
		999_499: "999 KB", 999_600: "1 MB", 3_400_000: "3.4 MB", 20_000_000: "20 MB", 2_500_000_000: "2.5 GB",
	}
	for n, want := range sizes {
		if got := media.HumanSize(n); got != want {
			t.Errorf("HumanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
