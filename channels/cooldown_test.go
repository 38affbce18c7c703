package channels_test

import (
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestCooldownsKeepTheLatestEnd(t *testing.T) {
	var c channels.Cooldowns
	if left := c.Left("a"); left != 0 {
		t.Fatalf("a chat never limited waits %s", left)
	}
	c.Limit("a", time.Hour)
	c.Limit("a", time.Second) // an earlier end never shortens the wait
	if left := c.Left("a"); left < 59*time.Minute {
		t.Errorf("after a 1h and a 1s limit, a waits %s, want about 1h", left)
	}
	c.Limit("b", -time.Second)
	if left := c.Left("b"); left != 0 {
		t.Errorf("an ended cooldown still waits %s", left)
	}
	c.Limit("", time.Hour)
	if left := c.Left(""); left != 0 {
		t.Errorf("a call to no chat in particular waits %s", left)
	}
}
