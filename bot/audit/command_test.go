package audit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/audit"
	"github.com/switchboard-chat/switchboard/channels"
)

// memLog is an audit log in memory, newest first.
type memLog struct {
	entries []audit.Entry
	asked   []int
	fail    bool
}

func (m *memLog) Audit(_ context.Context, limit int) ([]audit.Entry, error) {
	m.asked = append(m.asked, limit)
	if m.fail {
		return nil, errors.New("down")
	}
	return m.entries[:min(limit, len(m.entries))], nil
}

type admins []string

func (a admins) IsAdmin(id string) bool { return len(a) > 0 && a[0] == id }

func run(log *memLog, user, args string) string {
	c := audit.Commands(log, nil)[0]
	return c.Run(context.Background(), admins{"telegram:1"}, channels.Inbound{Platform: "telegram", ChatID: "5", UserID: user}, args)
}

func TestAuditShowsTheLastDecisionsToAdmins(t *testing.T) {
	at := time.Date(2026, 12, 2, 21, 16, 0, 0, time.FixedZone("CET", 3600))
	log := &memLog{entries: []audit.Entry{
		{At: at, Actor: "telegram:1", Action: "approval.decided", SubjectKind: "approval", SubjectID: "ab12", Detail: map[string]any{"status": "allowed"}},
		{At: at.Add(-time.Hour), Actor: "slack:U1", Action: "chat.reset", SubjectKind: "chat", SubjectID: "slack:C1"},
	}}
	if got := run(log, "2", ""); !strings.HasPrefix(got, "Only admins") || len(log.asked) != 0 {
		t.Errorf("non-admin /audit = %q (read %v)", got, log.asked)
	}
	got := run(log, "1", "")
	if log.asked[0] != audit.DefaultEntries {
		t.Errorf("/audit read %d entries, want %d", log.asked[0], audit.DefaultEntries)
	}
	for _, want := range []string{
		"Last 2 decisions, newest first (UTC):",
		"- 2026-12-02 20:16 · telegram:1 · approval.decided approval:ab12 → allowed",
		"- 2026-12-02 19:16 · slack:U1 · chat.reset chat:slack:C1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/audit = %q, want %q in it", got, want)
		}
	}
	if run(log, "1", "50"); log.asked[1] != 50 {
		t.Errorf("/audit 50 read %d", log.asked[1])
	}
	for _, bad := range []string{"0", "51", "-3", "ten", "1e3"} {
		if got := run(log, "1", bad); !strings.HasPrefix(got, "Usage: /audit [N]") {
			t.Errorf("/audit %s = %q, want the usage", bad, got)
		}
	}
	if len(log.asked) != 2 {
		t.Errorf("bad counts read the log: %v", log.asked)
	}
	if got := run(&memLog{}, "1", ""); got != "The audit log is empty." {
		t.Errorf("empty log = %q", got)
	}
	if got := run(&memLog{fail: true}, "1", ""); !strings.Contains(got, "Could not read") {
		t.Errorf("log down = %q", got)
	}
}

func TestLineEscapesWhatStrangersChose(t *testing.T) {
	e := audit.Entry{At: time.Unix(0, 0), Actor: "telegram:9", Action: "access.requested", SubjectKind: "identity",
		SubjectID: "*bold*\n[link](http://x)", Detail: map[string]any{"status": "`rm -rf`"}}
	got := audit.Line(e)
	if strings.ContainsAny(got, "\n") || strings.Contains(got, "*bold*") || strings.Contains(got, "[link]") || strings.Contains(got, " `rm") {
		t.Errorf("Line = %q, want Markdown escaped and one line", got)
	}
	long := audit.Line(audit.Entry{At: time.Unix(0, 0), Actor: strings.Repeat("a", 500), Action: "x"})
	if len(long) > 200 {
		t.Errorf("a 500-character actor made a %d-byte line", len(long))
	}
}
