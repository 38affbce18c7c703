package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-chat/switchboard/bot"
)

// storedFile is outbox.file: the file a row sends, by reference to media.
type storedFile struct {
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Size   int64  `json:"size"`
}

// encodeFile is outbox.file for f; nil (SQL NULL) for a text message.
func encodeFile(f *bot.OutboxFile) ([]byte, error) {
	if f == nil {
		return nil, nil
	}
	b, err := json.Marshal(storedFile{SHA256: storable(f.SHA256), Kind: storable(f.Kind), Name: storable(f.Name),
		Type: storable(f.Type), Size: f.Size})
	if err != nil {
		return nil, fmt.Errorf("encode file: %w", err)
	}
	return b, nil
}

// decodeFile reads outbox.file back; nil for a text message.
func decodeFile(raw []byte) (*bot.OutboxFile, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var s storedFile
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode file: %w", err)
	}
	return &bot.OutboxFile{SHA256: s.SHA256, Kind: s.Kind, Name: s.Name, Type: s.Type, Size: s.Size}, nil
}
