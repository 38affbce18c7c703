package main

import (
	"context"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// TestE2EHandoffAcrossReplicasRestartsAndFlush: two replicas on one Redis
// and Postgres; a handoff made through the first is honoured by the second
// once it takes over; the route survives a restart of both and a flush of
// Redis (restored from Postgres); /handoff back returns the chat.
func TestE2EHandoffAcrossReplicasRestartsAndFlush(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		return llmtest.Reply{Text: r.Model + " says: " + last.Content}
	})
	base := externalEnv(t, tg, llm, "")
	cfg := "agents:\n  - name: ops\n    model: ops-model\n"
	start := func() *daemonProc { return startReplica(ctx, t, base, cfg) }
	const chat = 6161
	ask := func(text, want string) {
		t.Helper()
		after := lastID(tg, chat)
		tg.SendText(chat, chat, "Hal", text)
		newReplyContaining(ctx, t, tg, chat, after, want)
	}
	a := start()
	ask("hello", "test-model says: hello")
	b := start()
	ask("/handoff ops", "Now talking to ops (handed off by default")

	// The first replica goes away; the second takes over Telegram and
	// answers with ops.
	a.stop()
	ask("who is this?", "ops-model says: who is this?")

	// Both restart.
	b.stop()
	a = start()
	ask("after the restart", "ops-model says: after the restart")

	// Redis loses everything of ours: the route comes back from Postgres.
	rc := goredis.NewClient(mustRedisOptions(t, base["SWITCHBOARD_REDIS_URL"]))
	defer rc.Close()
	keys, err := rc.Keys(context.Background(), base["SWITCHBOARD_REDIS_PREFIX"]+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis keys: %v (%d)", err, len(keys))
	}
	if !strings.Contains(strings.Join(keys, " "), "handoff:telegram:6161") {
		t.Errorf("the route was not in Redis: %v", keys)
	}
	if err := rc.Del(context.Background(), keys...).Err(); err != nil {
		t.Fatal(err)
	}
	ask("after the flush", "ops-model says: after the flush")

	ask("/handoff back", "Back to default (handed back from ops)")
	ask("and now?", "test-model says: and now?")
}

func mustRedisOptions(t *testing.T, url string) *goredis.Options {
	t.Helper()
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
