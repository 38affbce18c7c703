package retention_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/retention"
	"github.com/switchboard-chat/switchboard/channels"
)

// memStore records what the commands asked of it.
type memStore struct {
	resets  []string // scope by actor
	forgets []string // chat by actor
	holds   retention.Footprint
	fail    bool
}

func (m *memStore) ResetScope(_ context.Context, scope, actor string) (int, error) {
	if m.fail {
		return 0, errors.New("down")
	}
	m.resets = append(m.resets, scope+" by "+actor)
	if m.holds.Empty() {
		return 0, nil
	}
	return 1, nil
}

func (m *memStore) ChatFootprint(context.Context, string) (retention.Footprint, error) {
	return m.holds, nil
}

func (m *memStore) ForgetChat(_ context.Context, chat, actor string) (retention.Footprint, []string, error) {
	if m.fail {
		return retention.Footprint{}, nil, errors.New("down")
	}
	m.forgets = append(m.forgets, chat+" by "+actor)
	f := m.holds
	m.holds = retention.Footprint{}
	return f, []string{"helper/" + chat, "helper/" + chat + ":3"}, nil
}

type admins []string

func (a admins) IsAdmin(id string) bool {
	for _, x := range a {
		if x == id {
			return true
		}
	}
	return false
}

func run(t *testing.T, s *memStore, name, user, args string) string {
	t.Helper()
	return runWith(t, retention.Options{Store: s}, name, user, args)
}

func runWith(t *testing.T, o retention.Options, name, user, args string) string {
	t.Helper()
	for _, c := range retention.Commands(o) {
		if c.Name == name {
			in := channels.Inbound{Platform: "telegram", ChatID: "-5", ThreadID: "3", UserID: user}
			return c.Run(context.Background(), admins{"telegram:1"}, in, args)
		}
	}
	t.Fatalf("no /%s", name)
	return ""
}

func TestResetByAnyoneAllowed(t *testing.T) {
	s := &memStore{holds: retention.Footprint{Messages: 3}}
	if got := run(t, s, "reset", "2", ""); !strings.HasPrefix(got, "Fresh start") {
		t.Errorf("/reset = %q", got)
	}
	if len(s.resets) != 1 || s.resets[0] != "telegram:-5:3 by telegram:2" {
		t.Errorf("resets = %q, want this thread's, by its sender", s.resets)
	}
	empty := &memStore{}
	if got := run(t, empty, "reset", "2", ""); !strings.Contains(got, "Nothing to reset") {
		t.Errorf("/reset with no messages = %q", got)
	}
	if got := run(t, &memStore{fail: true}, "reset", "2", ""); !strings.Contains(got, "Could not reset") {
		t.Errorf("/reset with the store down = %q", got)
	}
}

func TestForgetNeedsAnAdminAndConfirm(t *testing.T) {
	s := &memStore{holds: retention.Footprint{Sessions: 2, Messages: 12, Memory: 1, Attachments: 3}}
	if got := run(t, s, "forget", "2", "confirm"); !strings.HasPrefix(got, "Only admins") {
		t.Errorf("non-admin /forget confirm = %q", got)
	}
	got := run(t, s, "forget", "1", "")
	if !strings.Contains(got, "12 messages, 1 memory document and 3 attachments") || !strings.Contains(got, "/forget confirm") {
		t.Errorf("/forget = %q, want the counts and how to confirm", got)
	}
	for _, typo := range []string{"confirmed", "yes", "confirm now", "CONFIRM"} {
		if got := run(t, s, "forget", "1", typo); !strings.HasPrefix(got, "Usage") {
			t.Errorf("/forget %s = %q, want the usage", typo, got)
		}
	}
	if len(s.forgets) != 0 {
		t.Fatalf("forgot without confirm: %q", s.forgets)
	}
	if got := run(t, s, "forget", "1", "confirm"); got != "Forgotten: deleted 12 messages, 1 memory document and 3 attachments." {
		t.Errorf("/forget confirm = %q", got)
	}
	if len(s.forgets) != 1 || s.forgets[0] != "telegram:-5 by telegram:1" {
		t.Errorf("forgets = %q, want the whole chat, by the admin", s.forgets)
	}
	if got := run(t, s, "forget", "1", ""); got != "This chat holds nothing to forget." {
		t.Errorf("/forget after forgetting = %q", got)
	}
	if got := run(t, &memStore{fail: true, holds: s.holds}, "forget", "1", "confirm"); !strings.Contains(got, "nothing was deleted") {
		t.Errorf("/forget confirm with the store down = %q", got)
	}
}

func TestForgetRemovesTheSessionsFiles(t *testing.T) {
	s := &memStore{holds: retention.Footprint{Messages: 1}}
	var removed []string
	remove := func(session string) error {
		removed = append(removed, session)
		if strings.HasSuffix(session, ":3") {
			return errors.New("permission denied")
		}
		return nil
	}
	got := runWith(t, retention.Options{Store: s, RemoveFiles: remove}, "forget", "1", "confirm")
	if !strings.HasPrefix(got, "Forgotten: deleted 1 message") || !strings.Contains(got, "in 1 workspace could not be removed") {
		t.Errorf("/forget confirm = %q", got)
	}
	if strings.Join(removed, " ") != "helper/telegram:-5 helper/telegram:-5:3" {
		t.Errorf("removed the files of %q, want every session's", removed)
	}
}
