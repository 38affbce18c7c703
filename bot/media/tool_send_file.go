package media

import (
	"context"
	"encoding/json"
	"io"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// SendFile is the send_file tool: a file of the caller's workspace, sent to
// this chat as a file (or as a photo, for a picture).
type SendFile struct{ t *mediaTools }

// Name implements tools.Tool.
func (*SendFile) Name() string { return "send_file" }

// Description implements tools.Tool.
func (*SendFile) Description() string {
	return "Send a file from this conversation's workspace to this chat (a report you wrote, a chart, a log). " +
		"A JPEG, PNG, GIF or WebP picture shows as a photo, anything else as a file. caption is a short text with it."
}

// Parameters implements tools.Tool.
func (*SendFile) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace, e.g. out/report.pdf."},` +
		`"caption":{"type":"string","description":"Text shown with the file (at most 1024 characters)."}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool: it posts to the chat, as message does.
func (*SendFile) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// Execute implements tools.Tool.
func (s *SendFile) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Path, Caption string }
	if err := decodeArgs(raw, &a, `{"path": "out/report.pdf", "caption"?: "..."}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if err := checkCaption(a.Caption); err != nil {
		return tools.ErrorResult(err.Error())
	}
	f, err := s.t.open(ctx, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer f.Close()
	if msg, big := s.t.tooBig(f); big {
		return tools.ErrorResult(msg)
	}
	stored, err := s.t.keep(ctx, channels.Attachment{Kind: channels.KindDocument, Name: f.name, Size: f.info.Size(),
		// Read to the end, not to the size seen, so a file still being
		// written is not sent cut; Fetch's cap bounds it.
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(f.File), nil }})
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	kind := channels.KindDocument
	if photoTypes[stored.Type] {
		kind = channels.KindPhoto
	}
	done, err := s.t.post(ctx, s.Name(), raw, kind, stored, a.Caption)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	return tools.Result{ForLLM: done}
}
