package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// doctorLine runs doctor in dir with env and returns its output and the line
// starting with prefix ("" when there is none).
func doctorLine(t *testing.T, dir string, env map[string]string, prefix string) (out, line string) {
	t.Helper()
	out, _ = runOnce(t, dir, env, "doctor")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return out, l
		}
	}
	return out, ""
}

// TestE2EDoctorChecksTheModel: doctor compares llm.model, and an agent's own
// model, with the server's model list and names the close matches; an empty
// model is a warning; a server without a list is no error.
func TestE2EDoctorChecksTheModel(t *testing.T) {
	_, llm := fakes(t)
	llm.SetModels("gpt-4o", "gpt-4o-mini", "o3")
	env := externalEnv(t, nil, llm, "")
	for _, c := range []struct {
		name, model, prefix string
		want                []string
	}{
		{"empty", "", "WARN llm:", []string{"llm.model is not set", "(the server lists gpt-4o, gpt-4o-mini, o3)"}},
		{"typo", "gpt4o", "WARN llm:", []string{`llm.model "gpt4o" is not in its list of models (3)`, "did you mean gpt-4o?"}},
		{"part", "4o", "WARN llm:", []string{"did you mean gpt-4o, gpt-4o-mini?"}},
		{"listed", "gpt-4o", "ok   llm:", []string{"model gpt-4o listed"}},
	} {
		env["SWITCHBOARD_LLM_MODEL"] = c.model
		out, line := doctorLine(t, t.TempDir(), env, c.prefix)
		for _, want := range c.want {
			if !strings.Contains(line, want) {
				t.Errorf("%s: doctor's %q line lacks %q:\n%s", c.name, c.prefix, want, out)
			}
		}
	}

	dir := t.TempDir()
	writeConfig(t, dir, "agents:\n  - name: helper\n    model: gpt-4o-mnii\n")
	env["SWITCHBOARD_LLM_MODEL"] = "gpt-4o"
	if out, line := doctorLine(t, dir, env, "WARN llm helper:"); !strings.Contains(line, `agents[0].model "gpt-4o-mnii" is not in its list`) ||
		!strings.Contains(line, "did you mean gpt-4o-mini, gpt-4o?") {
		t.Errorf("doctor does not check the agent's own model:\n%s", out)
	}

	llm.SetModels() // GET /models: 404
	env["SWITCHBOARD_LLM_MODEL"] = "whatever"
	if out, line := doctorLine(t, t.TempDir(), env, "ok   llm:"); !strings.Contains(line, "model whatever (the server lists no models") {
		t.Errorf("a server without a model list:\n%s", out)
	}
}

// TestE2EServeAndChatWarnWithoutModel: serve and chat say at start that
// llm.model is empty and what to set, before any message fails on it.
func TestE2EServeAndChatWarnWithoutModel(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	tg, llm := fakes(t)
	env := externalEnv(t, tg, llm, freeAddr(t))
	delete(env, "SWITCHBOARD_LLM_MODEL")
	const want = "llm.model is not set"
	d := startDaemon(t, t.TempDir(), env["SWITCHBOARD_HTTP_LISTEN"], env)
	if line := waitLog(ctx, t, d, want); !strings.Contains(line, "SWITCHBOARD_LLM_MODEL") {
		t.Errorf("serve's warning does not say what to set: %s", line)
	}
	d.stop()
	delete(env, "SWITCHBOARD_TELEGRAM_TOKEN")
	if out, _ := runOnce(t, t.TempDir(), env, "chat"); !strings.Contains(out, want) {
		t.Errorf("chat does not warn about the empty model:\n%s", out)
	}
}

// TestE2EDoctorPostgresHints: a server that answers but lacks the database
// or the role is told how to create it; one that does not answer is asked
// whether it runs.
func TestE2EDoctorPostgresHints(t *testing.T) {
	_, llm := fakes(t)
	env := externalEnv(t, nil, llm, "")
	base, err := url.Parse(env["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	noDB, noRole := *base, *base
	noDB.Path = "/sb_doctor_no_such_db"
	noRole.User = url.User("sb_doctor_no_such_role")
	for _, c := range []struct {
		name, url string
		want      []string
	}{
		{"database", noDB.String(), []string{`database "sb_doctor_no_such_db" does not exist`, "createdb -h", "sb_doctor_no_such_db", "leave database.url empty"}},
		{"role", noRole.String(), []string{`role "sb_doctor_no_such_role" does not exist`, "createuser -h", `CREATE ROLE "sb_doctor_no_such_role" LOGIN`, "leave database.url empty"}},
		{"down", "postgres://sb@" + freeAddr(t) + "/x?sslmode=disable", []string{"is it running?"}},
	} {
		env["SWITCHBOARD_DATABASE_URL"] = c.url
		out, line := doctorLine(t, t.TempDir(), env, "FAIL postgres:")
		for _, want := range c.want {
			if !strings.Contains(line, want) {
				t.Errorf("%s: doctor's postgres line lacks %q:\n%s", c.name, want, out)
			}
		}
		if c.name != "down" && strings.Contains(line, "is it running") {
			t.Errorf("%s: doctor asks whether a server that answered runs:\n%s", c.name, out)
		}
	}
}

// TestE2EDoctorSaysNoPlatformIsConfigured: without any platform token
// doctor says so and how to add one or try without.
func TestE2EDoctorSaysNoPlatformIsConfigured(t *testing.T) {
	tg, llm := fakes(t)
	const want = "WARN platform: no chat platform configured"
	out, line := doctorLine(t, t.TempDir(), externalEnv(t, nil, llm, ""), want)
	if line == "" || !strings.Contains(line, "telegram.token") || !strings.Contains(line, "switchboard chat") {
		t.Errorf("doctor without a platform:\n%s", out)
	}
	if out, line := doctorLine(t, t.TempDir(), externalEnv(t, tg, llm, ""), "WARN platform"); line != "" {
		t.Errorf("doctor with Telegram configured says there is no platform:\n%s", out)
	}
}

// TestE2EDoctorPrintsWhereStateGoes: doctor names data_dir, the embedded
// cluster and the exec workspaces where this config puts them, and how to
// remove them. As root with data_dir under a private directory (a clone in
// /root) the cluster and the workspaces live elsewhere.
func TestE2EDoctorPrintsWhereStateGoes(t *testing.T) {
	needServerBinaries(t)
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	env := map[string]string{"SWITCHBOARD_LLM_BASE_URL": llm.URL(), "SWITCHBOARD_LLM_MODEL": "llmtest"}
	dir := reachableDir(t)
	if os.Geteuid() == 0 {
		dir = t.TempDir() // its parent is 0700, like /root
	}
	dataDir := filepath.Join(dir, "data")
	cluster := filepath.Join(dataDir, "postgres")
	workspaces := filepath.Join(dataDir, "workspaces")
	// As root: /var/lib/switchboard, or the temporary directory when that
	// cannot be used (storage/postgres fallbackRoots).
	homes := []string{filepath.Join("/var/lib/switchboard", "postgres-"+hash6(dataDir)),
		filepath.Join(os.TempDir(), "switchboard", "postgres-"+hash6(dataDir))}
	if os.Geteuid() == 0 {
		workspaces = filepath.Join(os.TempDir(), "switchboard-workspaces-"+hash6(workspaces))
		t.Cleanup(func() { _ = os.RemoveAll(homes[0]); _ = os.RemoveAll(homes[1]); _ = os.RemoveAll(workspaces) })
	}
	out, line := doctorLine(t, dir, env, "ok   state:")
	if os.Geteuid() == 0 {
		cluster = filepath.Join(homes[0], "postgres")
		if !strings.Contains(line, cluster) {
			cluster = filepath.Join(homes[1], "postgres")
		}
	}
	for _, want := range []string{"data_dir " + dataDir, "PostgreSQL cluster " + cluster, "exec workspaces " + workspaces,
		"stop switchboard and run rm -rf " + dataDir} {
		if !strings.Contains(line, want) {
			t.Errorf("doctor's state line lacks %q:\n%s", want, out)
		}
	}
	if os.Geteuid() == 0 && !strings.HasSuffix(line, " "+filepath.Dir(cluster)+" "+workspaces) {
		t.Errorf("doctor does not say to remove the moved cluster and workspaces too:\n%s", out)
	}

	env["SWITCHBOARD_DATABASE_URL"] = pgtest.New(t)
	if out, line := doctorLine(t, reachableDir(t), env, "ok   state:"); !strings.Contains(line, "database at database.url") {
		t.Errorf("doctor's state line with database.url:\n%s", out)
	}
}

// hash6 is the 12 hex digits of sha256(s) that name a moved directory.
func hash6(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
