package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// TestE2EHelpListsEveryCommand: /help in the built daemon lists the
// built-in commands and those the features register, in the order the
// commands' documentation gives them, each once.
func TestE2EHelpListsEveryCommand(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	llm := llmtest.NewServer()
	defer llm.Close()
	p := startChatOn(t, llm)
	mark := p.typeLine("/help")
	p.waitAfter(ctx, mark, regexp.MustCompile(`/jobs`))
	want := []string{"help", "whoami", "status", "agents", "stop", "tasks", "model", "usage", "reset", "forget", "audit", "handoff", "context", "skills", "approvals", "cancel", "revoke", "tools", "login", "logout", "jobs"}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\W*/([a-z]+) — `).FindAllStringSubmatch(p.out.String()[mark:], -1) {
		got = append(got, m[1])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("/help lists %v, want %v; output:\n%s", got, want, p.out.String()[mark:])
	}
	p.quit(ctx)
}
