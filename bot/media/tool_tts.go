package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// maxSpeech bounds the text tts reads aloud (the speech endpoint's limit).
const maxSpeech = 4096

// TTS is the tts tool: text read aloud (media.tts), sent to this chat as a
// voice message.
type TTS struct{ t *mediaTools }

// Name implements tools.Tool.
func (*TTS) Name() string { return "tts" }

// Description implements tools.Tool.
func (*TTS) Description() string {
	return fmt.Sprintf("Read a text aloud and send it to this chat as a voice message (at most %d characters). "+
		`voice picks the speaker (e.g. "alloy", "nova"); omit it for the configured one.`, maxSpeech)
}

// Parameters implements tools.Tool.
func (*TTS) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"text":{"type":"string","description":"What to say."},` +
		`"voice":{"type":"string","description":"Voice name; default the configured media.tts.voice."}},` +
		`"required":["text"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool: it calls an outside speech service.
func (*TTS) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// Execute implements tools.Tool.
func (s *TTS) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Text, Voice string }
	if err := decodeArgs(raw, &a, `{"text": "...", "voice"?: "alloy"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	switch {
	case strings.TrimSpace(a.Text) == "":
		return tools.ErrorResult(`missing "text": pass what to say`)
	case utf8.RuneCountInString(a.Text) > maxSpeech:
		return tools.ErrorResult(fmt.Sprintf("text is longer than %d characters; say it in several voice messages", maxSpeech))
	case s.t.o.Speaker == nil:
		return tools.ErrorResult("no speech model is configured: set media.tts.model")
	}
	// The speech is streamed into the store, not held: Fetch opens it once.
	var speakErr error
	stored, err := s.t.keep(ctx, channels.Attachment{Kind: channels.KindVoice, Name: "voice.ogg",
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			body, err := s.t.o.Speaker.Speak(ctx, a.Text, strings.TrimSpace(a.Voice))
			speakErr = err
			return body, err
		}})
	switch {
	case errors.Is(speakErr, ErrNotConfigured):
		return tools.ErrorResult("no speech model is configured: set media.tts.model")
	case speakErr != nil:
		return tools.ErrorResult(serviceError("speech model", "media.tts", speakErr))
	case err != nil:
		return tools.ErrorResult(err.Error())
	}
	if stored.Type != "application/ogg" && !strings.HasPrefix(stored.Type, "audio/") {
		return tools.ErrorResult(fmt.Sprintf("the speech model answered with %s, not audio; try again, or ask an admin to check media.tts", stored.Type))
	}
	if stored.Type == "application/ogg" {
		stored.Type = "audio/ogg" // the bytes say Ogg; a voice message is audio
	}
	done, err := s.t.post(ctx, s.Name(), raw, channels.KindVoice, stored, "")
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	return tools.Result{ForLLM: done}
}
