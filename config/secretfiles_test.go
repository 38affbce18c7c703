package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/config"
)

func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "telegram_token")
	if err := os.WriteFile(token, []byte("123456:file-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Environ: []string{
		"SWITCHBOARD_TELEGRAM_TOKEN_FILE=" + token,
		"SWITCHBOARD_LOG_LEVEL_FILE=/x", // only secrets have _FILE variants
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Telegram.Token != "123456:file-secret-value" {
		t.Fatalf("token from file = %q (the trailing newline must go)", cfg.Telegram.Token)
	}
	if !slices.Contains(cfg.Secrets(), "123456:file-secret-value") {
		t.Fatal("a secret read from a file is not scrubbed")
	}
	if !slices.Equal(cfg.UnknownEnv, []string{"SWITCHBOARD_LOG_LEVEL_FILE"}) {
		t.Fatalf("unknown variables = %v", cfg.UnknownEnv)
	}

	for name, env := range map[string][]string{
		"both":       {"SWITCHBOARD_TELEGRAM_TOKEN=abc", "SWITCHBOARD_TELEGRAM_TOKEN_FILE=" + token},
		"unreadable": {"SWITCHBOARD_LLM_API_KEY_FILE=" + filepath.Join(dir, "missing")},
		"directory":  {"SWITCHBOARD_LLM_API_KEY_FILE=" + dir},
	} {
		_, err := config.Load(config.LoadOptions{Environ: env})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), "file-secret-value") {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
		if !strings.Contains(err.Error(), "_FILE") {
			t.Errorf("%s: the error does not name the variable: %v", name, err)
		}
	}
}

func TestEnvWarnings(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{Environ: []string{
		"SWITCHBOARD_TELEGRAM_TOKNE=x", "SWITCHBOARD_LLM_API_KEY_FIEL=/x", "SWITCHBOARD_WHATEVER_THIS_IS=1",
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.EnvWarnings(), "\n")
	for _, want := range []string{
		"SWITCHBOARD_TELEGRAM_TOKNE is not a setting and is ignored; did you mean SWITCHBOARD_TELEGRAM_TOKEN?",
		"did you mean SWITCHBOARD_LLM_API_KEY_FILE?",
		"SWITCHBOARD_WHATEVER_THIS_IS is not a setting and is ignored (see README",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
}
