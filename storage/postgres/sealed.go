package postgres

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/switchboard-chat/switchboard/storage/secretbox"
)

// sealMap encrypts m's values with box: name → base64(sealed). Names stay
// readable (they say what a value is for, not what it is).
func sealMap(box *secretbox.Box, m map[string]string) (json.RawMessage, error) {
	if len(m) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if box == nil {
		return nil, fmt.Errorf("secret values need encryption at rest: %w", ErrNoSecretsKey)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = base64.StdEncoding.EncodeToString(box.Seal([]byte(v)))
	}
	return json.Marshal(out)
}

// openMap decrypts what sealMap made; what names the owner in errors.
func openMap(box *secretbox.Box, sealed map[string]string, what string) (map[string]string, error) {
	if len(sealed) == 0 {
		return nil, nil
	}
	if box == nil {
		return nil, fmt.Errorf("%s has encrypted values: %w", what, ErrNoSecretsKey)
	}
	out := make(map[string]string, len(sealed))
	for k, v := range sealed {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, k, secretbox.ErrCorrupt)
		}
		plain, err := box.Open(raw)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, k, err)
		}
		out[k] = string(plain)
	}
	return out, nil
}
