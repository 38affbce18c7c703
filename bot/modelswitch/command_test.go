package modelswitch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/modelswitch"
	"github.com/switchboard-chat/switchboard/channels"
)

// memStore is a Store in memory.
type memStore struct{ chats map[string]string }

func (m *memStore) ChatModel(_ context.Context, chat string) (string, error) {
	return m.chats[chat], nil
}
func (m *memStore) SetChatModel(_ context.Context, chat, name, _ string) error {
	if name == "" {
		delete(m.chats, chat)
	} else {
		m.chats[chat] = name
	}
	return nil
}

// admins is a bot.Host whose admins are listed.
type admins []string

func (a admins) IsAdmin(id string) bool {
	for _, x := range a {
		if x == id {
			return true
		}
	}
	return false
}

func TestModelCommand(t *testing.T) {
	ctx := context.Background()
	store := &memStore{chats: map[string]string{}}
	s := modelswitch.New([]modelswitch.Model{{Name: "smart", Model: "big-1", Vision: true}, {Name: "fast", Model: "small-1"}}, "test-model", store, nil)
	run := modelswitch.Commands(s)[0].Run
	host := admins{"telegram:1"}
	from := func(user string) channels.Inbound {
		return channels.Inbound{Platform: "telegram", ChatID: "-5", ThreadID: "3", UserID: user}
	}
	chat := channels.Address{Platform: "telegram", ChatID: "-5"}

	if got := run(ctx, host, from("2"), ""); !strings.Contains(got, "default: test-model (default)") || !strings.Contains(got, "smart") {
		t.Errorf("/model = %q", got)
	}
	if got := run(ctx, host, from("2"), "smart"); got != "Only admins can switch the model; ask one of them." {
		t.Errorf("non-admin switch = %q", got)
	}
	if m, _ := s.ModelFor(ctx, chat); m != nil {
		t.Errorf("a refused switch took effect: %+v", m)
	}
	if got := run(ctx, host, from("1"), "huge"); !strings.Contains(got, "No model is called huge") || !strings.Contains(got, "default, smart, fast") {
		t.Errorf("unknown name = %q", got)
	}
	if got := run(ctx, host, from("1"), "smart"); got != "Model: smart: big-1" {
		t.Errorf("admin switch = %q", got)
	}
	m, err := s.ModelFor(ctx, channels.Address{Platform: "telegram", ChatID: "-5", ThreadID: "9"})
	if err != nil || m == nil || m.Model != "big-1" || !m.Vision {
		t.Errorf("model for another topic of the chat = %+v, %v", m, err)
	}
	if m, _ := s.ModelFor(ctx, channels.Address{Platform: "telegram", ChatID: "-6"}); m != nil {
		t.Errorf("another chat switched too: %+v", m)
	}
	if got := run(ctx, host, from("2"), ""); !strings.HasPrefix(got, "Model: smart: big-1") {
		t.Errorf("/model after the switch = %q", got)
	}
	if got := run(ctx, host, from("1"), "default"); got != "Model: default: test-model (default)" {
		t.Errorf("/model default = %q", got)
	}
	if m, _ := s.ModelFor(ctx, chat); m != nil {
		t.Errorf("after /model default: %+v", m)
	}
}

// failingStore fails every read: a run that reads it would fail.
type failingStore struct{ memStore }

func (failingStore) ChatModel(context.Context, string) (string, error) {
	return "", context.DeadlineExceeded
}

func TestWithoutModelsNothingIsRead(t *testing.T) {
	s := modelswitch.New(nil, "test-model", &failingStore{}, nil)
	chat := channels.Address{Platform: "telegram", ChatID: "5"}
	if m, err := s.ModelFor(context.Background(), chat); m != nil || err != nil {
		t.Fatalf("ModelFor = %v, %v; want the default without reading the store", m, err)
	}
	if d, err := s.Describe(context.Background(), chat); err != nil || !strings.Contains(d, "test-model") {
		t.Fatalf("Describe = %q, %v", d, err)
	}
}
