package config

import "time"

// Media bounds the attachments people send, says how long they are kept
// and which model services read and make them.
type Media struct {
	// MaxBytes is the largest attachment downloaded or sent; a larger one
	// is not downloaded and the person is told the limit.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// Keep is how long stored attachments are kept.
	Keep time.Duration `mapstructure:"keep"`
	// Transcription turns voice and audio into text.
	Transcription MediaModel `mapstructure:"transcription"`
	// Vision answers read_image when the agent's own model has no vision.
	Vision MediaModel `mapstructure:"vision"`
	// Images draws pictures for create_image.
	Images MediaModel `mapstructure:"images"`
	// TTS reads text aloud for tts.
	TTS MediaTTS `mapstructure:"tts"`
}

// MediaModel is an OpenAI-compatible model service media uses. An empty
// model turns the service off; empty base_url and api_key are llm's.
type MediaModel struct {
	BaseURL string `mapstructure:"base_url"`
	APIKey  string `mapstructure:"api_key" secret:"true"`
	Model   string `mapstructure:"model"`
}

// MediaTTS is the speech service: a MediaModel with the voice it speaks in.
type MediaTTS struct {
	BaseURL string `mapstructure:"base_url"`
	APIKey  string `mapstructure:"api_key" secret:"true"`
	Model   string `mapstructure:"model"`
	// Voice is the voice used when a call names none.
	Voice string `mapstructure:"voice"`
}

// Service returns the TTS service's model settings.
func (t MediaTTS) Service() MediaModel {
	return MediaModel{BaseURL: t.BaseURL, APIKey: t.APIKey, Model: t.Model}
}

// WithLLM returns m with its empty base_url and api_key taken from l when
// l's provider is openai (an Anthropic URL and key serve no
// OpenAI-compatible media endpoints).
func (m MediaModel) WithLLM(l LLM) MediaModel {
	if l.Provider != "openai" {
		return m
	}
	if m.BaseURL == "" {
		m.BaseURL = l.BaseURL
	}
	if m.APIKey == "" {
		m.APIKey = l.APIKey
	}
	return m
}
