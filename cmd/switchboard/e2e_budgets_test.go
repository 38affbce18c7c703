package main

import (
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// budgetConfig gives each user one token a day: the first message is
// answered (nothing was used before it), and it uses the budget up.
const budgetConfig = "budgets:\n  - {scope: user, limit: 1, per: day}\n"

// TestE2EBudgetAcrossReplicas: a user's budget used up through replica 0
// holds on replica 1 without a model request, and after Redis lost the
// running totals; the admin is asked once, presses Allow once more
// through replica 1, and the user is answered again.
func TestE2EBudgetAcrossReplicas(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	base := externalEnv(t, tg, llm, "")
	base["SWITCHBOARD_ADMINS"] = "telegram:500"
	withTelegramWebhook(base)
	rs := &replicaSet{t: t, base: base}
	for i := range 2 {
		dir := t.TempDir()
		writeConfig(t, dir, budgetConfig)
		rs.dirs, rs.addrs, rs.procs = append(rs.dirs, dir), append(rs.addrs, freeAddr(t)), append(rs.procs, nil)
		rs.start(ctx, i)
	}
	hook := func(i int) string { return "http://" + rs.addrs[i] + "/webhooks/telegram" }
	rs.leader(ctx, "leader:telegram:webhook")
	eventually(ctx, t, "the webhook registered", func() bool { return tg.Webhook() != nil })

	const user = 700
	say := func(replica int, text, want string) {
		t.Helper()
		tg.DeliverTo(hook(replica))
		after := lastID(tg, user)
		tg.SendText(user, user, "Uma", text)
		newReplyContaining(ctx, t, tg, user, after, want)
	}
	say(0, "first question", "echo: first question")
	asked := len(llm.Requests())

	say(1, "second question", "Budget used up")
	refusal := tg.Messages(user)[len(tg.Messages(user))-1].Visible
	for _, want := range []string{"per-user daily budget of 1 token", "resets at", "UTC", "asked an admin"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("refusal %q does not say %q", refusal, want)
		}
	}
	// Redis loses the running totals: the next check rebuilds them from the
	// usage records in PostgreSQL, and the budget holds.
	rc := goredis.NewClient(mustRedisOptions(t, base["SWITCHBOARD_REDIS_URL"]))
	defer rc.Close()
	keys, err := rc.Keys(ctx, base["SWITCHBOARD_REDIS_PREFIX"]+"budget:*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("budget totals in Redis: %v, %v", keys, err)
	}
	if err := rc.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	say(0, "third question", "Budget used up")
	if n := len(llm.Requests()); n != asked {
		t.Fatalf("the model got %d requests over budget", n-asked)
	}
	req, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("the admin was not asked: %v", err)
	}
	if n := len(tg.Messages(admin)); n != 1 || !strings.Contains(req[0].Visible, "telegram:700") {
		t.Fatalf("admin has %d messages (want one): %q", n, req[0].Visible)
	}

	tg.DeliverTo(hook(1))
	allow := buttonOn(t, req[0], "Allow once more")
	tg.PressButton(admin, user, req[0].ID, allow) // the user forges the admin's press
	if a := lastAnswerText(ctx, t, tg, 1); !strings.Contains(a, "You may not decide this") {
		t.Fatalf("the user's press answered %q", a)
	}
	tg.PressButton(admin, admin, req[0].ID, allow)
	if a := lastAnswerText(ctx, t, tg, 2); a != "Done: allowed once more by telegram:500." {
		t.Fatalf("the admin's press answered %q", a)
	}
	if m := waitEdited(ctx, t, tg, admin, req[0].ID); len(m.Buttons) != 0 || !strings.Contains(m.Visible, "Allowed once more by telegram:500") {
		t.Fatalf("admin message after the decision = %+v", m)
	}
	tg.PressButton(admin, admin, req[0].ID, allow)
	if a := lastAnswerText(ctx, t, tg, 3); a != "Already decided: allowed once more by telegram:500." {
		t.Fatalf("the second press answered %q", a)
	}
	say(1, "fourth question", "echo: fourth question")
	if n := len(llm.Requests()); n != asked+1 {
		t.Errorf("after Allow once more the model got %d requests, want 1", n-asked)
	}
}
