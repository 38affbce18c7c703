package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// testToken looks like a real bot token, so both the value scrubber and the
// token pattern have something to find.
const testToken = "7012345678:AAHk3vQ9xYz_TestTokenValue-abcdefghij12"

// externalEnv is the environment of a daemon on the real PostgreSQL and
// Redis with fakes for Telegram and the LLM.
func externalEnv(t *testing.T, tg *telegramtest.Server, llm *llmtest.Server, httpAddr string) map[string]string {
	env := map[string]string{
		"SWITCHBOARD_LLM_BASE_URL": llm.URL(),
		"SWITCHBOARD_LLM_MODEL":    "test-model",
		"SWITCHBOARD_DATABASE_URL": pgtest.New(t),
		"SWITCHBOARD_REDIS_URL":    redistest.URL(t),
		"SWITCHBOARD_REDIS_PREFIX": redistest.Prefix(t),
		"SWITCHBOARD_ACCESS_MODE":  "open",
		"SWITCHBOARD_HTTP_LISTEN":  httpAddr,
		"SWITCHBOARD_DATA_DIR":     reachableDir(t),
		"SWITCHBOARD_LOG_LEVEL":    "debug",
		// Most tests read the replies as the messages sent; the tests of
		// streamed answers (e2e_stream*_test.go) turn streaming on.
		"SWITCHBOARD_CONVERSATION_STREAM": "false",
		// Extraction asks the model too; the tests of the knowledge graph
		// (e2e_knowledge_test.go) turn it on, so the others' model requests
		// are only their agents'.
		"SWITCHBOARD_KNOWLEDGE_EXTRACT": "false",
	}
	if tg != nil {
		env["SWITCHBOARD_TELEGRAM_TOKEN"] = testToken
		env["SWITCHBOARD_TELEGRAM_API_URL"] = tg.URL()
	}
	return env
}

func TestE2EConversationSurvivesKill9(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	dir := t.TempDir()

	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	const chat, user = 1001, 42
	tg.SendText(chat, user, "Ann", "hello there")
	msgs, err := waitAnswers(ctx, tg, chat, 1)
	if err != nil {
		t.Fatalf("first reply: %v", err)
	}
	if got := msgs[0].Visible; !strings.Contains(got, "echo: hello there") || !strings.Contains(got, "history: 1 user messages") {
		t.Fatalf("first reply = %q", got)
	}
	second := tg.SendText(chat, user, "Ann", "second one")
	msgs, err = waitAnswers(ctx, tg, chat, 2)
	if err != nil {
		t.Fatalf("second reply: %v", err)
	}
	if got := msgs[1].Visible; !strings.Contains(got, "echo: second one") || !strings.Contains(got, "history: 2 user messages") {
		t.Fatalf("second reply does not see the first message in history: %q", got)
	}

	d.kill9()
	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	// Telegram redelivers what a crashed bot never confirmed: answered once.
	if err := tg.Redeliver(second); err != nil {
		t.Fatalf("redeliver: %v", err)
	}
	tg.SendText(chat, user, "Ann", "third after restart")
	msgs, err = waitAnswers(ctx, tg, chat, 3)
	if err != nil {
		t.Fatalf("third reply: %v", err)
	}
	if got := msgs[2].Visible; !strings.Contains(got, "echo: third after restart") || !strings.Contains(got, "history: 3 user messages") {
		t.Fatalf("after kill -9 the conversation was not kept: %q", got)
	}
	// A short grace period for a (wrong) late duplicate reply to show up.
	time.Sleep(500 * time.Millisecond)
	if n := len(answers(tg, chat)); n != 3 {
		t.Fatalf("chat has %d bot messages, want 3 (the redelivered update was answered again?): %+v", n, tg.Messages(chat))
	}
}

func TestE2EConfiguredSecretNeverReachesChat(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_LLM_API_KEY"] = "plain-words-not-a-pattern-42"
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)

	tg.SendText(7, 7, "Eve", "SAY: the bot token is "+testToken+" and the key is plain-words-not-a-pattern-42")
	msgs, err := waitAnswers(ctx, tg, 7, 1)
	if err != nil {
		t.Fatalf("reply: %v", err)
	}
	got := msgs[0].Visible
	for _, secret := range []string{testToken, "plain-words-not-a-pattern-42", "TestTokenValue"} {
		if strings.Contains(got, secret) {
			t.Fatalf("reply leaks %q: %q", secret, got)
		}
	}
	if !strings.Contains(got, "[REDACTED]") || !strings.Contains(got, "the bot token is") {
		t.Fatalf("reply should keep the sentence and redact the values: %q", got)
	}
	for _, secret := range []string{testToken, "plain-words-not-a-pattern-42"} {
		if strings.Contains(d.out.String(), secret) {
			t.Fatalf("log leaks %q", secret)
		}
	}
}

// TestE2EEmbeddedDefault starts serve with only the Telegram token and URL
// and the LLM URL set: it must bring up its own PostgreSQL and Redis and
// answer.
func TestE2EEmbeddedDefault(t *testing.T) {
	needServerBinaries(t)
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	dir := reachableDir(t)
	env := map[string]string{
		"SWITCHBOARD_TELEGRAM_TOKEN":   testToken,
		"SWITCHBOARD_TELEGRAM_API_URL": tg.URL(),
		"SWITCHBOARD_LLM_BASE_URL":     llm.URL(),
	}
	addr := "127.0.0.1:8080" // the default http.listen
	if c, err := (&http.Client{Timeout: time.Second}).Get("http://" + addr + "/healthz"); err == nil {
		c.Body.Close()
		addr = freeAddr(t) // something else has the default port here
		env["SWITCHBOARD_HTTP_LISTEN"] = addr
	}
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	if !strings.Contains(d.out.String(), "single replica") {
		t.Errorf("the log should say loudly that the in-process Redis is single-replica")
	}

	tg.SendText(5, 5, "Newcomer", "hi")
	msgs, err := waitAnswers(ctx, tg, 5, 1)
	if err != nil {
		t.Fatalf("no answer on the embedded default: %v", err)
	}
	// access.mode defaults to request: a stranger is told how to get in.
	if got := msgs[0].Visible; !strings.Contains(got, "telegram:5") {
		t.Fatalf("answer to a stranger = %q; want it to name telegram:5", got)
	}
	if _, err := os.Stat(dir + "/data/postgres"); err != nil {
		t.Fatalf("embedded PostgreSQL data should be under ./data: %v", err)
	}
}

func TestE2EBadConfigExits2(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	d := startDaemon(t, t.TempDir(), "", map[string]string{
		"SWITCHBOARD_ACCESS_MODE":    "opne",
		"SWITCHBOARD_RATELIMIT_USER": "20 per minute",
	})
	code, err := d.wait(ctx)
	if err != nil {
		t.Fatal("serve with invalid config did not exit")
	}
	if code != 2 {
		t.Fatalf("exit code %d, want 2; output:\n%s", code, d.out.String())
	}
	out := d.out.String()
	for _, want := range []string{`access.mode must be open, allowlist or request (got "opne")`, "ratelimit.user"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestE2EDependenciesDownThenUp starts with PostgreSQL and Redis
// unreachable: /readyz names both; when they come back the daemon becomes
// ready and answers without a restart.
func TestE2EDependenciesDownThenUp(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	pgProxy := newProxy(t, hostPort(t, env["SWITCHBOARD_DATABASE_URL"]))
	redisProxy := newProxy(t, hostPort(t, env["SWITCHBOARD_REDIS_URL"]))
	env["SWITCHBOARD_DATABASE_URL"] = strings.Replace(env["SWITCHBOARD_DATABASE_URL"], pgProxy.target, pgProxy.addr, 1)
	env["SWITCHBOARD_REDIS_URL"] = strings.Replace(env["SWITCHBOARD_REDIS_URL"], redisProxy.target, redisProxy.addr, 1)

	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitStatus(ctx, "/healthz", http.StatusOK)
	body := d.waitStatus(ctx, "/readyz", http.StatusServiceUnavailable)
	down := notReady(t, body)
	for _, want := range []string{"postgres", "redis"} {
		if _, ok := down[want]; !ok {
			t.Errorf("/readyz does not name %s: %s", want, body)
		}
	}
	pgProxy.start(t)
	redisProxy.start(t)
	d.waitReady(ctx)
	// The migrations were retried in the background: one line when it
	// began, one when it worked, none per attempt.
	log := d.out.String()
	for line, want := range map[string]int{"database not usable yet": 1, "database migrations applied after retrying": 1} {
		if n := strings.Count(log, line); n != want {
			t.Errorf("log has %q %d times, want %d:\n%s", line, n, want, log)
		}
	}
	tg.SendText(9, 9, "Bo", "are you back?")
	msgs, err := waitAnswers(ctx, tg, 9, 1)
	if err != nil {
		t.Fatalf("no answer after dependencies came back: %v", err)
	}
	if !strings.Contains(msgs[0].Visible, "echo: are you back?") {
		t.Fatalf("reply = %q", msgs[0].Visible)
	}
}

// TestE2ELLMDownGivesErrorIDThenRecovers: a failing model gives the user a
// short message with an error id, never silence; once the model works the
// next message is answered.
func TestE2ELLMDownGivesErrorIDThenRecovers(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	d := startDaemon(t, t.TempDir(), addr, externalEnv(t, tg, llm, addr))
	d.waitReady(ctx)

	llm.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: http.StatusServiceUnavailable} })
	tg.SendText(11, 11, "Cy", "anyone home?")
	msgs, err := waitAnswers(ctx, tg, 11, 1)
	if err != nil {
		t.Fatalf("no answer while the model is down: %v", err)
	}
	if got := msgs[0].Visible; !strings.Contains(got, "error id") || strings.Contains(got, "goroutine") {
		t.Fatalf("error reply = %q", got)
	}
	llm.Handle(nil) // the model is back
	after := lastID(tg, 11)
	tg.SendText(11, 11, "Cy", "now?")
	newReplyContaining(ctx, t, tg, 11, after, "echo: now?")
}

func TestE2EDoctorExplainsBadSetup(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	d := startDaemon(t, t.TempDir(), "", map[string]string{
		"SWITCHBOARD_DATABASE_URL": "postgres://nobody:pw-secret-123@" + freeAddr(t) + "/x?sslmode=disable",
		"SWITCHBOARD_REDIS_URL":    "redis://:redis-secret-456@" + freeAddr(t) + "/0",
		"SWITCHBOARD_LLM_BASE_URL": "http://" + freeAddr(t) + "/v1",
	}, "doctor")
	code, err := d.wait(ctx)
	if err != nil {
		t.Fatal("doctor did not finish")
	}
	out := d.out.String()
	if code != 1 {
		t.Fatalf("doctor exit code %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"FAIL postgres", "FAIL redis", "FAIL llm", "ok   config"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pw-secret-123") || strings.Contains(out, "redis-secret-456") {
		t.Errorf("doctor printed a password:\n%s", out)
	}
	// go-redis logs its failed dials itself ("redis: 2026/11/28 … failed
	// to dial"); they go through the one logger, at debug level.
	if strings.Contains(out, "failed to dial") {
		t.Errorf("go-redis's own log lines reached the output:\n%s", out)
	}
	if n := strings.Count(out, "check redis.url"); n != 1 {
		t.Errorf("doctor says to check redis.url %d times, want once:\n%s", n, out)
	}
}

// TestE2EDoctorSaysWhetherAutovacuumRuns: doctor warns about a PostgreSQL
// that runs without autovacuum and not about one that runs it, whichever
// this machine's is.
func TestE2EDoctorSaysWhetherAutovacuumRuns(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	tg, llm := fakes(t)
	env := externalEnv(t, tg, llm, "")
	conn, err := pgx.Connect(ctx, env["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	var on bool
	err = conn.QueryRow(ctx, `SELECT setting = 'on' FROM pg_settings WHERE name = 'autovacuum'`).Scan(&on)
	_ = conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, t.TempDir(), "", env, "doctor")
	if _, err := d.wait(ctx); err != nil {
		t.Fatal("doctor did not finish")
	}
	out := d.out.String()
	warned := strings.Contains(out, "WARN postgres: connected, but autovacuum is off")
	if warned == on || on != strings.Contains(out, "ok   postgres: connected") {
		t.Errorf("autovacuum on: %v; doctor said:\n%s", on, out)
	}
}
