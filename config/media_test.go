package config

import (
	"strings"
	"testing"
	"time"
)

func TestConfigMediaDefaultsAndEnv(t *testing.T) {
	c := Defaults()
	if c.Media.MaxBytes != 20_000_000 || c.Media.Keep != 30*24*time.Hour {
		t.Fatalf("media defaults = %+v, want 20000000 bytes and 30 days", c.Media)
	}
	c = *mustLoad(t, LoadOptions{File: writeFile(t, "media:\n  keep: 7d\n"), Environ: []string{"SWITCHBOARD_MEDIA_MAX_BYTES=5000000"}})
	if c.Media.MaxBytes != 5_000_000 || c.Media.Keep != 7*24*time.Hour {
		t.Fatalf("media from file and env = %+v, want 5000000 bytes and 7 days", c.Media)
	}
	c = *mustLoad(t, LoadOptions{File: writeFile(t, ""), Environ: []string{"SWITCHBOARD_MEDIA_KEEP=1d12h"}})
	if c.Media.Keep != 36*time.Hour {
		t.Fatalf("SWITCHBOARD_MEDIA_KEEP=1d12h gives %s, want 36h", c.Media.Keep)
	}
}

func TestConfigDurationsInDays(t *testing.T) {
	good := map[string]time.Duration{"30d": 30 * 24 * time.Hour, "0d": 0, "1d30m": 24*time.Hour + 30*time.Minute, "90s": 90 * time.Second, "2h": 2 * time.Hour}
	for s, want := range good {
		if got, err := parseDuration(s); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"d", "1.5d", "-1d", "1d-1h", "1dd", "999999999999d", "soon"} {
		if got, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q) = %s, want an error", s, got)
		}
	}
	_, err := Load(LoadOptions{File: writeFile(t, "media:\n  keep: a month\n"), Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), `media.keep: "a month" is not a duration: use a number with a unit, e.g. 90s, 2m or 30d`) {
		t.Errorf("Load of keep: a month = %v, want a message that says how to write it", err)
	}
}

func TestConfigMediaValidation(t *testing.T) {
	tests := []struct {
		mutate func(m *Media)
		want   string
	}{
		{func(m *Media) { m.MaxBytes = 0 }, "media.max_bytes must be more than 0 (got 0); the default 20000000 (20 MB)"},
		{func(m *Media) { m.MaxBytes = -5 }, "media.max_bytes must be more than 0 (got -5)"},
		{func(m *Media) { m.Keep = time.Minute }, "media.keep must be at least 1h (got 1m0s)"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(&c.Media)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate = %v, want it to contain %q", err, tt.want)
		}
	}
}

func TestConfigMediaServicesFromFileAndEnv(t *testing.T) {
	c := Defaults()
	if c.Media.TTS.Voice != "alloy" || c.Media.Transcription.Model != "" || c.LLM.Vision {
		t.Fatalf("defaults: tts voice %q, transcription model %q, vision %v; want alloy, off, false",
			c.Media.TTS.Voice, c.Media.Transcription.Model, c.LLM.Vision)
	}
	file := writeFile(t, `
llm: {base_url: "http://llm.local/v1", api_key: llm-key}
media:
  transcription: {model: whisper-1}
  images: {model: gpt-image-1, base_url: "http://img.local/v1", api_key: img-key}
agents:
  - {name: seer, vision: false}
  - {name: plain}
`)
	c = *mustLoad(t, LoadOptions{File: file, Environ: []string{
		"SWITCHBOARD_LLM_VISION=true",
		"SWITCHBOARD_MEDIA_TTS_MODEL=tts-1", "SWITCHBOARD_MEDIA_TTS_VOICE=nova",
		"SWITCHBOARD_MEDIA_VISION_MODEL=gpt-4o-mini", "SWITCHBOARD_MEDIA_VISION_API_KEY=vision-key",
		"SWITCHBOARD_MEDIA_TRANSCRIPTION_BASE_URL=http://whisper.local:8080/v1",
	}})
	if !c.LLM.Vision {
		t.Error("SWITCHBOARD_LLM_VISION=true did not turn llm.vision on")
	}
	if c.LLMFor(c.Agents[0]).Vision || !c.LLMFor(c.Agents[1]).Vision {
		t.Errorf("agents[].vision: seer %v (set false), plain %v (unset: llm.vision); want false, true",
			c.LLMFor(c.Agents[0]).Vision, c.LLMFor(c.Agents[1]).Vision)
	}
	if got := c.Media.Transcription.WithLLM(c.LLM); got != (MediaModel{BaseURL: "http://whisper.local:8080/v1", APIKey: "llm-key", Model: "whisper-1"}) {
		t.Errorf("transcription = %+v; want its own URL and llm's key", got)
	}
	if got := c.Media.Images.WithLLM(c.LLM); got != (MediaModel{BaseURL: "http://img.local/v1", APIKey: "img-key", Model: "gpt-image-1"}) {
		t.Errorf("images = %+v; want its own settings", got)
	}
	if got := c.Media.Vision.WithLLM(c.LLM); got != (MediaModel{BaseURL: "http://llm.local/v1", APIKey: "vision-key", Model: "gpt-4o-mini"}) {
		t.Errorf("vision = %+v; want llm's URL and its own key", got)
	}
	if tts := c.Media.TTS.Service().WithLLM(c.LLM); tts.Model != "tts-1" || c.Media.TTS.Voice != "nova" || tts.BaseURL != "http://llm.local/v1" {
		t.Errorf("tts = %+v voice %q", tts, c.Media.TTS.Voice)
	}
	secrets := strings.Join(c.Secrets(), " ")
	for _, k := range []string{"img-key", "vision-key"} {
		if !strings.Contains(secrets, k) {
			t.Errorf("Secrets() lacks %s: media keys must be scrubbed like llm.api_key", k)
		}
	}
	if r := c.Redacted(); r["media.images.api_key"] != "[redacted]" || r["media.vision.api_key"] != "[redacted]" {
		t.Errorf("Redacted shows media keys: %v %v", r["media.images.api_key"], r["media.vision.api_key"])
	}
}

// Another provider's URL and key are not an OpenAI-compatible media
// server's: a media service on an anthropic llm needs a URL of its own.
func TestConfigMediaServicesOnAnthropic(t *testing.T) {
	c := valid()
	c.LLM.Provider, c.LLM.BaseURL, c.LLM.APIKey = "anthropic", "https://api.anthropic.com", "sk-ant"
	c.Media.Transcription.Model = "whisper-1"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "media.transcription.base_url must be set: llm.provider anthropic has no OpenAI-compatible endpoint") {
		t.Fatalf("Validate = %v", err)
	}
	if got := c.Media.Transcription.WithLLM(c.LLM); got.BaseURL != "" || got.APIKey != "" {
		t.Errorf("MediaService borrowed anthropic's settings: %+v", got)
	}
}

func TestConfigMediaServiceValidation(t *testing.T) {
	tests := []struct {
		mutate func(m *Media)
		want   string
	}{
		{func(m *Media) { m.Images.BaseURL = "ftp://x" }, "media.images.base_url must be an http:// or https:// URL with a host"},
		{func(m *Media) { m.TTS.BaseURL = "localhost:8000" }, "media.tts.base_url must be an http:// or https:// URL with a host"},
		{func(m *Media) { m.TTS.Model, m.TTS.Voice = "tts-1", " " }, "media.tts.voice must name a voice"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(&c.Media)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate = %v, want it to contain %q", err, tt.want)
		}
	}
}
