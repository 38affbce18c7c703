package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// streamOn turns streamed answers on (externalEnv turns them off).
var streamOn = map[string]string{"SWITCHBOARD_CONVERSATION_STREAM": "true"}

// pacedWords is an answer of n words the fake model writes one per pace.
func pacedWords(prefix string, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return strings.Join(words, " ")
}

// paced scripts the fake model to write text one word per pace.
func paced(llm *llmtest.Server, text string, pace time.Duration) {
	llm.Enqueue(llmtest.Reply{Text: text, Pace: pace})
}

// updateRate checks that the visible updates at times ats came at most
// about once a second.
func updateRate(t *testing.T, ats []time.Time) {
	t.Helper()
	if len(ats) < 2 {
		return
	}
	span := ats[len(ats)-1].Sub(ats[0]).Seconds()
	if max := 1.2*span + 1; float64(len(ats)-1) > max {
		t.Fatalf("%d visible updates in %.1fs, want at most about one a second", len(ats)-1, span)
	}
}
