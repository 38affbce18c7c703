package retention

import (
	"strings"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// ChatOf returns the chat (platform:chat_id) a session scope belongs to:
// a chat's address, any of its threads, or work done for it (a teammate's
// team:<team>:<origin>, a subagent's sub:<id>:<parent key>, however deep);
// "" for anything else (a job's scope).
func ChatOf(scope string) string {
	for range 16 { // subagents of subagents: a few levels at most
		if _, origin, ok := tools.ParseTeamScope(scope); ok {
			scope = origin
			continue
		}
		if _, parent, ok := tools.ParseSubScope(scope); ok {
			scope = tools.ScopeOf(parent)
			continue
		}
		break
	}
	if strings.HasPrefix(scope, "team:") || strings.HasPrefix(scope, "sub:") || strings.HasPrefix(scope, "job:") {
		return ""
	}
	a, err := channels.ParseAddress(scope)
	if err != nil {
		return ""
	}
	return ChatKey(a)
}

// ChatKey is the chat of an address: every thread of a chat is one chat.
func ChatKey(a channels.Address) string { return a.Platform + ":" + a.ChatID }
