package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// TestE2EDiscordGatewayFailover runs three replicas on one Discord bot:
// one holds the gateway session, the others only send. While 100
// messages arrive in 10 direct-message channels the leader is killed with
// kill -9; another replica takes the gateway over within 10 s by
// resuming the stored session (no new Identify), Discord replays what was
// sent meanwhile, and every message is answered, twice at most when its
// reply was in flight at the kill.
func TestE2EDiscordGatewayFailover(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	dc := discordtest.NewServer()
	defer dc.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	base := externalEnv(t, nil, llm, "")
	withDiscord(base, dc)
	base["SWITCHBOARD_CONVERSATION_QUEUE"] = "followup" // one reply per message
	rs := startReplicas(ctx, t, base, 3)
	lead := rs.leader(ctx, "leader:discord:gateway")
	if n := len(dc.Identifies()); n != 1 {
		t.Fatalf("%d gateway identifies from 3 replicas, want 1", n)
	}

	const chats, perChat = 10, 10
	user := func(c int) string { return fmt.Sprintf("70000000000000%04d", c) }
	channel := func(c int) string { return fmt.Sprintf("80000000000000%04d", c) }
	var wg sync.WaitGroup
	for c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range perChat {
				dc.SendMessage(channel(c), "", user(c), "Ann", fmt.Sprintf("SAY: reply %d-%d", c, m))
				time.Sleep(250 * time.Millisecond)
			}
		}()
	}
	time.Sleep(time.Second)
	rs.procs[lead].kill9()
	killed := time.Now()
	within, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	next := rs.leader(within, "leader:discord:gateway", lead)
	for dc.Resumes() == 0 {
		select {
		case <-within.Done():
			t.Fatalf("replica %d leads but did not resume the gateway session within 10 s", next)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Logf("gateway moved from replica %d to %d and resumed in %v", lead, next, time.Since(killed).Round(time.Millisecond))
	wg.Wait()

	lost, doubled := 0, 0
	for c := range chats {
		want := make([]string, perChat)
		for m := range perChat {
			want[m] = fmt.Sprintf("reply %d-%d", c, m)
		}
		count := map[string]int{}
		for {
			clear(count)
			for _, m := range dc.Messages(channel(c)) {
				if m.AuthorID == discordtest.BotID {
					count[m.Content]++
				}
			}
			if !slices.ContainsFunc(want, func(w string) bool { return count[w] == 0 }) || ctx.Err() != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, w := range want {
			switch n := count[w]; {
			case n == 0:
				lost++
			case n > 1:
				doubled += n - 1
			}
		}
	}
	t.Logf("%d messages: %d lost, %d answered twice; %d identifies, %d resumes",
		chats*perChat, lost, doubled, len(dc.Identifies()), dc.Resumes())
	if lost > 0 {
		t.Errorf("%d of %d messages never answered", lost, chats*perChat)
	}
	if doubled > chats {
		t.Errorf("%d duplicate answers", doubled)
	}
	if n := len(dc.Identifies()); n != 1 {
		t.Errorf("%d identifies: the new leader did not resume", n)
	}

	// Rolling restart: SIGTERM the new leader while a message arrives; the
	// gateway moves to the last replica, resumes again, and the message
	// sent during the hand-over is answered once.
	resumes := dc.Resumes()
	stopped := time.Now()
	go rs.procs[next].stop()
	dc.SendMessage(channel(0), "", user(0), "Ann", "SAY: during the rolling restart")
	within2, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	last := rs.leader(within2, "leader:discord:gateway", lead, next)
	for dc.Resumes() == resumes {
		select {
		case <-within2.Done():
			t.Fatalf("replica %d leads but did not resume within 10 s of the SIGTERM", last)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Logf("after SIGTERM the gateway moved from replica %d to %d and resumed in %v", next, last, time.Since(stopped).Round(time.Millisecond))
	eventually(ctx, t, "the answer sent during the rolling restart", func() bool {
		n := 0
		for _, m := range dc.Messages(channel(0)) {
			if m.AuthorID == discordtest.BotID && m.Content == "during the rolling restart" {
				n++
			}
		}
		return n == 1
	})
	if n := len(dc.Identifies()); n != 1 {
		t.Errorf("%d identifies after the rolling restart, want 1", n)
	}
}
