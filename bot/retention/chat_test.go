package retention_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/bot/retention"
)

func TestChatOf(t *testing.T) {
	for scope, want := range map[string]string{
		"telegram:42":                                  "telegram:42",
		"slack:C1:1700.1":                              "slack:C1",
		"team:crew:telegram:42":                        "telegram:42",
		"sub:s1:helper/telegram:42:7":                  "telegram:42",
		"sub:s2:helper/sub:s1:ops/team:crew:discord:9": "discord:9",
		"job:daily":                                    "",
		"team:broken":                                  "",
		"":                                             "",
	} {
		if got := retention.ChatOf(scope); got != want {
			t.Errorf("ChatOf(%q) = %q, want %q", scope, got, want)
		}
	}
}
