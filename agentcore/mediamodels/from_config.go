package mediamodels

import (
	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/config"
)

// Models are the media services the configuration turns on; each is nil
// when its model is empty. Hand one to an interface (bot/media's
// Transcriber…) only when it is not nil: a nil pointer in an interface is
// not a nil interface. (Called on nil, each still answers with an error
// saying which setting turns it on.)
type Models struct {
	Transcriber *Transcriber
	ImageReader *ImageReader
	ImageMaker  *ImageMaker
	Speaker     *Speaker
}

// FromConfig returns the media services m configures, their empty base_url
// and api_key taken from llm (see config.MediaModel.WithLLM); each call is
// bounded by llm.timeout. meter, when set, meters the chat-model calls
// (Service.Meter).
func FromConfig(m config.Media, llm config.LLM, meter agentcore.Meter) Models {
	service := func(key string, mm config.MediaModel) (Service, bool) {
		mm = mm.WithLLM(llm)
		return Service{Config: key, BaseURL: mm.BaseURL, APIKey: mm.APIKey, Model: mm.Model, Timeout: llm.Timeout, Meter: meter}, mm.Model != ""
	}
	var out Models
	if s, on := service("media.transcription", m.Transcription); on {
		out.Transcriber = NewTranscriber(s)
	}
	if s, on := service("media.vision", m.Vision); on {
		out.ImageReader = NewImageReader(s)
	}
	if s, on := service("media.images", m.Images); on {
		out.ImageMaker = NewImageMaker(s)
	}
	if s, on := service("media.tts", m.TTS.Service()); on {
		out.Speaker = NewSpeaker(s, m.TTS.Voice)
	}
	return out
}
