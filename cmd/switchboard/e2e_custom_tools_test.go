package main

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

func writeKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	path := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(k)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestE2ECustomToolAddedInChatKeepsItsSecret: an admin adds a custom tool
// with /tools add; the model uses it at once, and its env value never
// reaches the chat (scrubbed by value). The value is stored encrypted: a
// restart without the key, or with another key, refuses to start and says
// why; `switchboard secrets rotate` moves it to a new key, with which the
// daemon starts and the tool still works.
func TestE2ECustomToolAddedInChatKeepsItsSecret(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(toolBrain(map[string]func(string) llmtest.ToolCall{
		"whisper": func(word string) llmtest.ToolCall {
			return llmtest.ToolCall{Name: "whisper", Arguments: `{"word":"` + word + `"}`}
		},
	}, func(llmtest.Request) string { return "ok" }))
	const secret = "tok-5ecret-77-abcdef"
	key1 := writeKey(t)
	env := approvalEnv(t, tg, llm, "")
	env["SWITCHBOARD_SECRETS_KEY_FILE"] = key1
	dir := t.TempDir()
	cfg := "tools: {approvals: {network: allow}}\n"
	writeConfig(t, dir, cfg)
	start := func(env map[string]string) *daemonProc {
		env["SWITCHBOARD_HTTP_LISTEN"] = freeAddr(t)
		env["SWITCHBOARD_DATA_DIR"] = filepath.Join(dir, "data")
		return startDaemon(t, dir, env["SWITCHBOARD_HTTP_LISTEN"], env)
	}
	d := start(env)
	d.waitReady(ctx)
	say := func(chat int64, text, want string) string {
		t.Helper()
		after := lastID(tg, chat)
		tg.SendText(chat, chat, "U", text)
		return newReplyContaining(ctx, t, tg, chat, after, want).Visible
	}
	say(admin, `/tools add {"name": "whisper", "description": "prints a token and a word", `+
		`"parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}, `+
		`"command": "printf '%s %s' \"$WHISPER_TOKEN\" {{.word}}", "timeout": "5s", "env": {"WHISPER_TOKEN": "`+secret+`"}}`,
		"Added custom tool whisper")
	const user = 7474
	got := say(user, "whisper $(id)", "tool said:")
	if strings.Contains(got, secret) || !strings.Contains(got, "$(id)") {
		t.Fatalf("reply = %q; want the word literally and the token scrubbed", got)
	}
	if list := say(admin, "/tools", "Custom tools:"); !strings.Contains(list, "whisper") || strings.Contains(list, secret) {
		t.Fatalf("/tools = %q", list)
	}
	d.stop()

	// Without the key, and with another one, the daemon refuses to start.
	for name, keyFile := range map[string]string{"no key": "", "another key": writeKey(t)} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		delete(e, "SWITCHBOARD_SECRETS_KEY_FILE")
		if keyFile != "" {
			e["SWITCHBOARD_SECRETS_KEY_FILE"] = keyFile
		}
		p := start(e)
		code, err := p.wait(ctx)
		if err != nil || code == 0 {
			t.Fatalf("%s: exit %d, %v; want a refusal", name, code, err)
		}
		out := p.out.String()
		if !strings.Contains(out, "stored custom tools") || strings.Contains(out, secret) {
			t.Fatalf("%s: output does not say why (or shows the secret):\n%s", name, out)
		}
	}

	// Rotate to a new key; the daemon starts with it and the tool works.
	key2 := writeKey(t)
	cmd := exec.Command(binPath, "secrets", "rotate", "--new-key-file", key2)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "re-encrypted the env of 1 custom tools") {
		t.Fatalf("secrets rotate: %v\n%s", err, out)
	}
	env["SWITCHBOARD_SECRETS_KEY_FILE"] = key2
	d = start(env)
	d.waitReady(ctx)
	if got := say(user, "whisper again", "tool said:"); !strings.Contains(got, "again") || strings.Contains(got, secret) {
		t.Fatalf("after the rotation: %q", got)
	}
}
