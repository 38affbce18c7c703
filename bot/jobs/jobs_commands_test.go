package jobs

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestJobNameFrom(t *testing.T) {
	for prompt, want := range map[string]string{
		"Summarise yesterday's alerts, please":   "summarise-yesterdays-alerts",
		"!!!":                                    "job",
		"a very long prompt that goes on and on": "a-very-long-prompt-that-goes",
	} {
		if got := jobNameFrom(prompt); got != want || !jobNameRE.MatchString(got) {
			t.Errorf("jobNameFrom(%q) = %q, want %q", prompt, got, want)
		}
	}
}

func TestJobsCommandRefusals(t *testing.T) {
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	if got := jobsCommand(ctx, CommandOptions{Logger: log}, true, inbound(), ""); !strings.Contains(got, "not enabled") {
		t.Errorf("nil store: %q", got)
	}
	var store Store = struct{ Store }{} // never called on these paths
	if got := jobsCommand(ctx, CommandOptions{Store: store, Logger: log}, false, inbound(), "add * * * * * | x"); !strings.Contains(got, "Only admins") {
		t.Errorf("non-admin: %q", got)
	}
	for args, want := range map[string]string{
		"add * * * | report":   `expected 5 or 6 fields, got 3`,
		"add TZ=0 | report":    "unknown time zone",
		"add @every 1h report": "Separate the schedule and the prompt with |",
		"frobnicate":           "Usage: /jobs",
	} {
		if got := jobsCommand(ctx, CommandOptions{Store: store, Logger: log}, true, inbound(), args); !strings.Contains(got, want) {
			t.Errorf("/jobs %s = %q, want it to contain %q", args, got, want)
		}
	}
}

func inbound() channels.Inbound {
	return channels.Inbound{Platform: "telegram", ChatID: "-100", UserID: "1", Text: "/jobs"}
}
