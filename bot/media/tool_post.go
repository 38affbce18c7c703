package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// maxCaption bounds a file's caption: Telegram's limit, the smallest of the
// three platforms'.
const maxCaption = 1024

// photoTypes are the image types every platform shows as a photo; any
// other image goes as a file.
var photoTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// checkCaption refuses a caption the platforms would not take.
func checkCaption(caption string) error {
	if n := utf8.RuneCountInString(caption); n > maxCaption {
		return fmt.Errorf("caption is %d characters; a file's caption takes at most %d (send the rest with your reply)", n, maxCaption)
	}
	return nil
}

// keep stores a file the way inbound media is stored (media.Fetch: capped
// at media.max_bytes, hashed, typed from the bytes); the error is the
// message for the model.
func (t *mediaTools) keep(ctx context.Context, a channels.Attachment) (Stored, error) {
	if t.o.Store == nil || t.o.Outbox == nil {
		return Stored{}, errors.New("sending files is not available here (no media store or outbox is wired)")
	}
	var chat string
	if call, ok := tools.CallFrom(ctx); ok && call.Channel != "" && call.ChatID != "" {
		chat = call.Channel + ":" + call.ChatID
	}
	s, err := Fetch(ctx, a, chat, t.o.MaxBytes, t.o.Store)
	switch {
	case errors.Is(err, ErrTooLarge):
		return Stored{}, fmt.Errorf("%s is too large to send: %v (media.max_bytes)", a.Name, err)
	case err != nil:
		return Stored{}, fmt.Errorf("could not store %s right now: %v; try again later", a.Name, err)
	}
	return s, nil
}

// post queues stored file s (shown as kind, with caption) for the chat
// and thread of the call in ctx, through the durable outbox, and returns
// what happened, for the model. tool and raw are the call's name and
// arguments: with the call's session and id they key the row, so the same
// call run again (resumed after a crash that came before its result was
// stored) queues nothing new, while a model reusing a call id for another
// file still sends it.
func (t *mediaTools) post(ctx context.Context, tool string, raw json.RawMessage, kind string, s Stored, caption string) (string, error) {
	call, _ := tools.CallFrom(ctx)
	if call.Channel == "" || call.ChatID == "" {
		return "", errors.New("this call has no chat to send to; files go only to the conversation they are made in")
	}
	to := channels.Address{Platform: call.Channel, ChatID: call.ChatID, ThreadID: call.ThreadID}
	m := bot.OutboxMessage{To: to, Text: t.o.Scrub(caption), Key: sendKey(call, tool, raw), File: &bot.OutboxFile{
		SHA256: s.SHA256, Kind: kind, Name: s.Name, Type: s.Type, Size: s.Size,
	}}
	if _, err := t.o.Outbox.Enqueue(ctx, m); err != nil {
		return "", fmt.Errorf("could not queue %s for the chat right now: %v; try again later", s.Name, err)
	}
	if t.o.Nudge != nil {
		t.o.Nudge()
	}
	return fmt.Sprintf("sent %s (%s) to this chat", s.Name, HumanSize(s.Size)), nil
}

// sendKey is the outbox key of what call (of tool, with arguments raw)
// sends: "" when the call has no session or id to be known by again.
func sendKey(call tools.Call, tool string, raw json.RawMessage) string {
	if call.Session == "" || call.ToolCallID == "" {
		return ""
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(call.Session), []byte(call.ToolCallID), []byte(tool), raw} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return "call:" + hex.EncodeToString(h.Sum(nil))
}
