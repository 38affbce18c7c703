package main

import (
	"testing"
	"time"
)

func TestParseSlotReadsPromptAndEcho(t *testing.T) {
	want := slotKey{job: "j00042", slot: time.Date(2026, 12, 3, 7, 17, 0, 0, time.UTC)}
	for _, text := range []string{
		`[scheduled job \"j00042\", slot 2026-12-03T07:17:00Z]\nreport`,
		"echo: [scheduled job \"j00042\", slot 2026-12-03T07:17:00Z]\nreport (history: 3 user messages)",
	} {
		if got, ok := parseSlot(text); !ok || got.job != want.job || !got.slot.Equal(want.slot) {
			t.Errorf("parseSlot(%q) = %+v, %v; want %+v", text, got, ok, want)
		}
	}
	if _, ok := parseSlot("echo: m12"); ok {
		t.Error("a message reply read as a job slot")
	}
}
