package telegram

import (
	"errors"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestDisplayName(t *testing.T) {
	tests := []struct {
		u    models.User
		want string
	}{
		{models.User{ID: 1, FirstName: "Ann", LastName: "Lee", Username: "ann"}, "Ann Lee"},
		{models.User{ID: 1, FirstName: "Ann"}, "Ann"},
		{models.User{ID: 1, Username: "ann"}, "@ann"},
		{models.User{ID: 17}, "17"},
	}
	for _, tt := range tests {
		if got := displayName(&tt.u); got != tt.want {
			t.Errorf("displayName(%+v) = %q, want %q", tt.u, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"a😀b", 2, "a"}, // the emoji takes two units and does not fit
		{"a😀b", 3, "a😀"},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestTarget(t *testing.T) {
	chat, thread, err := target(channels.Address{Platform: "telegram", ChatID: "-1001", ThreadID: "5"})
	if err != nil || chat != int64(-1001) || thread != 5 {
		t.Errorf("numeric target = %v %v %v", chat, thread, err)
	}
	chat, _, err = target(channels.Address{ChatID: "@news"})
	if err != nil || chat != "@news" {
		t.Errorf("@name target = %v %v", chat, err)
	}
	for _, bad := range []channels.Address{{ChatID: ""}, {ChatID: "@"}, {ChatID: "12a"}, {Platform: "discord", ChatID: "1"}} {
		if _, _, err := target(bad); !errors.Is(err, channels.ErrPermanent) {
			t.Errorf("target(%+v) err = %v, want ErrPermanent", bad, err)
		}
	}
}
