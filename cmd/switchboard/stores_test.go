package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// needServerBinaries skips (fails in CI) without PostgreSQL's binaries.
func needServerBinaries(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("pg_ctl"); err == nil {
		return
	}
	if matches, _ := os.ReadDir("/usr/lib/postgresql"); len(matches) > 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("PostgreSQL server binaries are missing; .ci/run installs them")
	}
	t.Skip("no PostgreSQL server binaries for the embedded stores")
}

// embeddedEnv is the environment of a daemon on the embedded stores.
func embeddedEnv(tg *telegramtest.Server, llm *llmtest.Server, httpAddr string) map[string]string {
	return map[string]string{
		"SWITCHBOARD_TELEGRAM_TOKEN":   testToken,
		"SWITCHBOARD_TELEGRAM_API_URL": tg.URL(),
		"SWITCHBOARD_LLM_BASE_URL":     llm.URL(),
		"SWITCHBOARD_HTTP_LISTEN":      httpAddr,
	}
}

// embeddedServe is serve on the embedded stores with fake Telegram and LLM.
type embeddedServe struct {
	d   *daemonProc
	tg  *telegramtest.Server
	llm *llmtest.Server
	dir string
}

// startEmbeddedServe starts serve on the embedded stores in a fresh
// directory (with extra env) and waits until it is ready.
func startEmbeddedServe(ctx context.Context, t *testing.T, extra map[string]string) embeddedServe {
	t.Helper()
	needServerBinaries(t)
	s := embeddedServe{tg: telegramtest.NewServer(testToken), llm: llmtest.NewServer(), dir: reachableDir(t)}
	t.Cleanup(s.tg.Close)
	t.Cleanup(s.llm.Close)
	env := embeddedEnv(s.tg, s.llm, freeAddr(t))
	for k, v := range extra {
		env[k] = v
	}
	s.d = startDaemon(t, s.dir, env["SWITCHBOARD_HTTP_LISTEN"], env)
	s.d.waitReady(ctx)
	return s
}

// runOnce runs `switchboard args…` in dir to its end.
func runOnce(t *testing.T, dir string, env map[string]string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader("")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("switchboard %v did not finish:\n%s", args, out)
	}
	return string(out), err
}

// postmasterOf returns the pid of the server of the cluster in pgData.
func postmasterOf(t *testing.T, pgData string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(pgData, "postmaster.pid"))
	if err != nil {
		t.Fatalf("embedded PostgreSQL is not running: %v", err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestE2EEmbeddedSecondProcessOnDataDir: while serve runs on the embedded
// stores, `migrate` on the same data_dir shares its PostgreSQL and leaves
// it running, and `chat` refuses to start a second in-process Redis.
func TestE2EEmbeddedSecondProcessOnDataDir(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	es := startEmbeddedServe(ctx, t, nil)
	serve, llm, dir := es.d, es.llm, es.dir
	pgData := filepath.Join(dir, "data", "postgres")
	server := postmasterOf(t, pgData)

	migrateOut, err := runOnce(t, dir, map[string]string{}, "migrate")
	if err != nil {
		t.Fatalf("migrate beside serve: %v\n%s", err, migrateOut)
	}
	if got := postmasterOf(t, pgData); got != server || syscall.Kill(server, 0) != nil {
		t.Fatalf("after migrate exited the server is %d (alive: %v), want serve's %d still running", got, syscall.Kill(server, 0) == nil, server)
	}

	doctorOut, _ := runOnce(t, dir, map[string]string{"SWITCHBOARD_LLM_BASE_URL": llm.URL()}, "doctor")
	if !strings.Contains(doctorOut, "ok   postgres: embedded (no database.url): started and answered") {
		t.Errorf("doctor beside serve did not reach the embedded server:\n%s", doctorOut)
	}
	if got := postmasterOf(t, pgData); got != server || syscall.Kill(server, 0) != nil {
		t.Fatalf("after doctor exited the server is %d, want serve's %d still running", got, server)
	}

	chatOut, err := runOnce(t, dir, map[string]string{"SWITCHBOARD_LLM_BASE_URL": llm.URL()}, "chat")
	if err == nil {
		t.Fatalf("chat on serve's data_dir with the in-process Redis started:\n%s", chatOut)
	}
	want := fmt.Sprintf("already served by another switchboard process (pid %d); stop it or configure redis.url", serve.cmd.Process.Pid)
	if !strings.Contains(chatOut, want) {
		t.Errorf("chat's refusal does not say %q:\n%s", want, chatOut)
	}
	if got := postmasterOf(t, pgData); got != server {
		t.Errorf("after chat the server is %d, want serve's %d", got, server)
	}
	if code, body := serve.get("/readyz"); code != 200 {
		t.Errorf("serve not ready after the other processes: %d %s", code, body)
	}

	pw, err := os.ReadFile(filepath.Join(dir, "data", "postgres.password"))
	if err != nil || len(strings.TrimSpace(string(pw))) < 32 {
		t.Fatalf("password file: %v (%d bytes)", err, len(pw))
	}
	for name, out := range map[string]string{"serve": serve.out.String(), "migrate": migrateOut, "doctor": doctorOut, "chat": chatOut} {
		if strings.Contains(out, strings.TrimSpace(string(pw))) {
			t.Errorf("%s's output shows the database password", name)
		}
	}
}

// TestE2EDoctorStartsTheEmbeddedDefault: without database.url, doctor
// really starts the embedded PostgreSQL, connects, and stops it again.
func TestE2EDoctorStartsTheEmbeddedDefault(t *testing.T) {
	needServerBinaries(t)
	llm := llmtest.NewServer()
	defer llm.Close()
	dir := reachableDir(t)
	out, _ := runOnce(t, dir, map[string]string{"SWITCHBOARD_LLM_BASE_URL": llm.URL()}, "doctor")
	if !strings.Contains(out, "ok   postgres: embedded (no database.url): started and answered") {
		t.Fatalf("doctor did not start the embedded server:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "postgres", "PG_VERSION")); err != nil {
		t.Errorf("no cluster after doctor: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "postgres", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("doctor left its server running (postmaster.pid: %v)", err)
	}

	// A server that cannot start is one readable FAIL line.
	broken := reachableDir(t)
	if err := os.MkdirAll(filepath.Join(broken, "data", "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "data", "postgres", "junk"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runOnce(t, broken, map[string]string{"SWITCHBOARD_LLM_BASE_URL": llm.URL()}, "doctor")
	if err == nil || !strings.Contains(out, "FAIL postgres: embedded postgres:") || !strings.Contains(out, "is not a PostgreSQL data directory") {
		t.Errorf("doctor on a broken cluster directory (err %v):\n%s", err, out)
	}
}

// TestE2EEmbeddedPrivateDataDirAsRoot: as root, serve on a data_dir under a
// directory only root may enter (a clone in /root, a mktemp -d) keeps the
// cluster where the server's user reaches it, changing no permissions.
func TestE2EEmbeddedPrivateDataDirAsRoot(t *testing.T) {
	needServerBinaries(t)
	if os.Geteuid() != 0 {
		t.Skip("only root hands the embedded server to another user")
	}
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir() // its parent is 0700
	before, err := os.Stat(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	env := embeddedEnv(tg, llm, freeAddr(t))
	d := startDaemon(t, dir, env["SWITCHBOARD_HTTP_LISTEN"], env)
	m := regexp.MustCompile(`cluster lives outside data_dir.* cluster=(\S+)`).FindStringSubmatch(waitLog(ctx, t, d, "cluster lives outside data_dir"))
	if m == nil {
		t.Fatalf("serve does not say where the cluster went:\n%s", d.out)
	}
	home := m[1]
	t.Cleanup(func() { d.stop(); _ = os.RemoveAll(home) })
	d.waitReady(ctx)
	if _, err := os.Stat(filepath.Join(home, "postgres", "PG_VERSION")); err != nil {
		t.Errorf("no cluster in %s: %v", home, err)
	}
	if after, err := os.Stat(filepath.Dir(dir)); err != nil || after.Mode() != before.Mode() {
		t.Errorf("data_dir's parent mode %v -> %v (%v): nothing may be chmod-ed", before.Mode(), after.Mode(), err)
	}
}

// waitLog waits until the daemon's output has a line containing s and
// returns that line.
func waitLog(ctx context.Context, t *testing.T, d *daemonProc, s string) string {
	t.Helper()
	for {
		for _, line := range strings.Split(d.out.String(), "\n") {
			if strings.Contains(line, s) {
				return line
			}
		}
		select {
		case <-d.done:
			t.Fatalf("switchboard exited (code %d) before logging %q:\n%s", d.exitCd, s, d.out)
		case <-ctx.Done():
			t.Fatalf("switchboard never logged %q:\n%s", s, d.out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestE2EEmbeddedServerKilledIsRestarted: when serve's embedded PostgreSQL
// dies (kill -9 of the postmaster), serve starts it again on the same port
// and goes on answering.
func TestE2EEmbeddedServerKilledIsRestarted(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	es := startEmbeddedServe(ctx, t, map[string]string{"SWITCHBOARD_ACCESS_MODE": "open"})
	d, tg, dir := es.d, es.tg, es.dir
	tg.SendText(31, 31, "Ann", "one")
	newReplyContaining(ctx, t, tg, 31, 0, "echo: one")

	server := postmasterOf(t, filepath.Join(dir, "data", "postgres"))
	if err := syscall.Kill(server, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitLog(ctx, t, d, "embedded postgres: restarted")
	if got := postmasterOf(t, filepath.Join(dir, "data", "postgres")); got == server {
		t.Fatalf("the postmaster is still the killed %d", server)
	}
	after := lastID(tg, 31)
	tg.SendText(31, 31, "Ann", "two")
	newReplyContaining(ctx, t, tg, 31, after, "echo: two")
}
