package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/secretbox"
)

// secretsCmd is `switchboard secrets rotate --new-key-file FILE`: every
// secret stored in Postgres is re-sealed with the new key in one
// transaction (the configured key must open them). Then point
// secrets.key_file (or SWITCHBOARD_SECRETS_KEY) at the new key and restart.
func secretsCmd(ctx context.Context, args []string, cfgFile string, stdout, stderr io.Writer) error {
	const line = "switchboard secrets rotate --new-key-file FILE [--config FILE]   re-encrypt stored secrets with a new key"
	if len(args) == 0 || args[0] != "rotate" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Fprintf(stdout, "Usage:\n  %s\n", line)
			return errHelp
		}
		return fmt.Errorf("%w: switchboard secrets rotate --new-key-file FILE", errUsage)
	}
	fs := newFlags("secrets rotate", line, stdout, stderr)
	fs.StringVar(&cfgFile, "config", cfgFile, "YAML config file (default ./switchboard.yaml if present)")
	newKeyFile := fs.String("new-key-file", "", "file with the new 32-byte key (raw, hex or base64)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *newKeyFile == "" {
		return fmt.Errorf("%w: --new-key-file is required (make a key with: head -c 32 /dev/urandom | base64 > new.key)", errUsage)
	}
	raw, err := os.ReadFile(*newKeyFile)
	if err != nil {
		return fmt.Errorf("--new-key-file: %w", err)
	}
	key, err := secretbox.ParseKey(raw)
	if err != nil {
		return fmt.Errorf("--new-key-file: %w", err)
	}
	next, _ := secretbox.New(key)
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		return err
	}
	current, err := secretbox.Load(cfg.SecretsKey.Key, cfg.SecretsKey.KeyFile)
	if err != nil {
		return fmt.Errorf("current secrets key: %w", err)
	}
	st, err := openMigrated(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.close(ctx)
	n, err := postgres.CustomTools{DB: st.db, Box: current}.Rotate(ctx, next)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "re-encrypted the env of %d custom tools; now set secrets.key_file: %s (or SWITCHBOARD_SECRETS_KEY) and restart every replica\n", n, *newKeyFile)
	return nil
}
