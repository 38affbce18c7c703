package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

func TestLoggerScrubsSecretsEverywhere(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "debug", "json", tools.NewScrubber("hunter2-very-secret"))
	log = log.With("dsn", "postgres://u:hunter2-very-secret@h/db")
	log.Info("connecting with hunter2-very-secret",
		"err", errors.New("auth failed for hunter2-very-secret"),
		"nested", map[string]string{"k": "hunter2-very-secret"},
		"plain", "fine")
	out := buf.String()
	if strings.Contains(out, "hunter2-very-secret") {
		t.Fatalf("log leaks the secret: %s", out)
	}
	for _, want := range []string{`"plain":"fine"`, "connecting with", tools.Redacted} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: %s", want, out)
		}
	}
}
