package mediamodels

import (
	"bufio"
	"context"
	"io"

	"github.com/openai/openai-go/v3"
)

// Speaker reads text aloud through POST {base_url}/audio/speech, as Ogg
// Opus: the format of a voice message on every platform.
type Speaker struct {
	c     client
	sdk   openai.AudioSpeechService
	voice string
}

// NewSpeaker returns a Speaker for s (Config "media.tts" when empty) that
// speaks in voice when a call names none.
func NewSpeaker(s Service, voice string) *Speaker {
	if s.Config == "" {
		s.Config = "media.tts"
	}
	c := newClient(s)
	return &Speaker{c: c, sdk: openai.NewAudioSpeechService(c.api.Options()...), voice: voice}
}

// oggMagic opens every Ogg stream.
const oggMagic = "OggS"

// Speak streams text spoken in voice ("" for the configured one) as Ogg
// Opus. The caller closes the stream.
func (s *Speaker) Speak(ctx context.Context, text, voice string) (io.ReadCloser, error) {
	if s == nil {
		return nil, (*client)(nil).ready("media.tts")
	}
	if err := s.c.ready(s.c.svc.Config); err != nil {
		return nil, err
	}
	if voice == "" {
		voice = s.voice
	}
	resp, err := s.sdk.New(ctx, openai.AudioSpeechNewParams{
		Input:          text,
		Model:          openai.SpeechModel(s.c.svc.Model),
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatOpus,
	})
	if err != nil {
		return nil, s.c.fail(ctx, "speaking", err)
	}
	// An answer that is not Ogg (an HTML page, JSON, MP3 from a server
	// that ignores response_format) would reach the chat as a broken
	// voice message: it is refused before anything is sent.
	br := bufio.NewReader(resp.Body)
	if head, err := br.Peek(len(oggMagic)); err != nil || string(head) != oggMagic {
		resp.Body.Close()
		return nil, s.c.garbage("speaking", "is not Ogg Opus audio (response_format opus)")
	}
	return struct {
		io.Reader
		io.Closer
	}{br, resp.Body}, nil
}
