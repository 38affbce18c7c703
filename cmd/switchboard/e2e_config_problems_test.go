package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EConfigProblemsAtOnce: serve, doctor and migrate given a file with
// two unknown keys and bad values (in the file, the environment, a tool
// list and a job) exit 2 and name every problem in the one run, each on
// its own line.
func TestE2EConfigProblemsAtOnce(t *testing.T) {
	dir := t.TempDir()
	body := "telgram:\n  token: abc\nllm:\n  modle: gpt\n  timeout: soon\nlog:\n  level: loud\ntools:\n  allow: [web_fetc]\n" +
		"jobs:\n  - name: x\n    schedule: \"TZ=0\"\n    prompt: p\n    target: telegram:1\n"
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"unknown key telgram.token (did you mean telegram.token?)",
		"unknown key llm.modle (did you mean llm.model?)",
		`llm.timeout: "soon" is not a duration`,
		`log.level must be debug, info, warn or error (got "loud")`,
		`unknown tool "web_fetc"`,
		`database.max_conns: "many" is not a whole number (e.g. 16)`,
		`unknown time zone "0"`,
	}
	for _, command := range []string{"serve", "doctor", "migrate"} {
		cmd := exec.Command(binPath, command)
		cmd.Dir = dir
		cmd.Env = append(baseEnv(), "SWITCHBOARD_DATABASE_MAX_CONNS=many")
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", command, code, out)
		}
		lines := strings.Split(string(out), "\n")
		for _, w := range want {
			n := 0
			for _, l := range lines {
				n += strings.Count(l, w)
			}
			if n != 1 {
				t.Errorf("%s: %q on %d lines, want on exactly one:\n%s", command, w, n, out)
			}
		}
	}
}
