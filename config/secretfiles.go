package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/viper"
)

// fileSuffix names the variable that reads a secret key's value from a
// file: SWITCHBOARD_TELEGRAM_TOKEN_FILE=/run/credentials/…/telegram_token.
const fileSuffix = "_FILE"

// maxSecretFile bounds a secret file: secrets are short, a big file is a
// mistake.
const maxSecretFile = 64 << 10

// applySecretFiles sets every secret key that has a SWITCHBOARD_<KEY>_FILE
// variable in environ from that file's content (one trailing newline
// removed). It returns the names it consumed, and problems: an unreadable
// file (named, its content never shown) or a key set both ways.
func applySecretFiles(v *viper.Viper, environ []string, all []field) (consumed []string, problems Problems) {
	keyEnv := map[string]bool{}
	for _, f := range all {
		keyEnv[f.env()] = true
	}
	byFile := map[string]field{}
	for _, f := range all {
		// SWITCHBOARD_SECRETS_KEY_FILE is secrets.key_file's own variable
		// (a path the daemon reads the key from: the same meaning).
		if f.secret && !f.fileOnly && !keyEnv[f.env()+fileSuffix] {
			byFile[f.env()+fileSuffix] = f
		}
	}
	set := map[string]bool{}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if val != "" {
			set[name] = true
		}
	}
	for _, kv := range environ {
		name, path, _ := strings.Cut(kv, "=")
		f, ok := byFile[name]
		if !ok {
			continue
		}
		consumed = append(consumed, name)
		if path == "" {
			continue
		}
		if set[f.env()] {
			problems = append(problems, fmt.Sprintf("%s: set %s or %s, not both", f.key, f.env(), name))
			continue
		}
		val, err := readSecretFile(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s=%s: %v", f.key, name, path, err))
			continue
		}
		v.Set(f.key, val)
	}
	return consumed, problems
}

// readSecretFile reads a secret from path, without one trailing newline.
// Errors never include the content.
func readSecretFile(path string) (string, error) {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot read the file (%v)", unwrapPath(err))
	case info.IsDir():
		return "", fmt.Errorf("is a directory, not a file")
	case info.Size() > maxSecretFile:
		return "", fmt.Errorf("is %d bytes; a secret file holds just the value", info.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the file (%v)", unwrapPath(err))
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("the file is empty")
	}
	return s, nil
}

// unwrapPath drops the path from an *os.PathError (the caller names it).
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
