package mediamodels_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/agentcore/mediamodels"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
)

// The clients are what bot/media expects of each service.
var (
	_ media.Transcriber = (*mediamodels.Transcriber)(nil)
	_ media.ImageReader = (*mediamodels.ImageReader)(nil)
	_ media.ImageMaker  = (*mediamodels.ImageMaker)(nil)
	_ media.Speaker     = (*mediamodels.Speaker)(nil)
)

const testKey = "sk-media-secret-4711"

func service(t *testing.T, llm *llmtest.Server, model string) mediamodels.Service {
	t.Helper()
	return mediamodels.Service{BaseURL: llm.URL(), APIKey: testKey, Model: model, Timeout: 10 * time.Second}
}

func newFake(t *testing.T) *llmtest.Server {
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	return llm
}

// checkFailure asserts err says which service failed, where, and what to
// check, and holds no API key.
func checkFailure(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error %q holds the API key", err)
	}
}

func TestTranscribeSendsTheAudio(t *testing.T) {
	llm := newFake(t)
	llm.EnqueueTranscription(llmtest.MediaReply{Text: "meet at noon"})
	tr := mediamodels.NewTranscriber(service(t, llm, "whisper-1"))
	audio := []byte("OggS\x00voice-note-bytes\xff")
	text, err := tr.Transcribe(context.Background(), "inbox/voice.ogg", bytes.NewReader(audio))
	if err != nil || text != "meet at noon" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	got := llm.Transcriptions()
	if len(got) != 1 || got[0].Model != "whisper-1" || got[0].FileName != "voice.ogg" || !bytes.Equal(got[0].File, audio) {
		t.Fatalf("the server received %+v; want whisper-1, voice.ogg and the exact audio", got)
	}
	if got[0].Auth != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got[0].Auth)
	}
}

func TestTranscribeFailuresAreClear(t *testing.T) {
	llm := newFake(t)
	llm.EnqueueTranscription(llmtest.MediaReply{Status: 500}, llmtest.MediaReply{Garbage: "<html>proxy error</html>"},
		llmtest.MediaReply{Garbage: `{"words": []}`})
	tr := mediamodels.NewTranscriber(service(t, llm, "whisper-1"))
	for _, want := range [][]string{
		{"media.transcription", "whisper-1", llm.URL(), "HTTP 500", "try again later"},
		{"media.transcription", llm.URL(), "check media.transcription.base_url"},
		{"media.transcription", "has no text", "check that media.transcription.base_url"},
	} {
		_, err := tr.Transcribe(context.Background(), "a.mp3", strings.NewReader("x"))
		checkFailure(t, err, want...)
	}
}

func TestTranscribeRefusedKeyNamesTheSetting(t *testing.T) {
	llm := newFake(t)
	llm.EnqueueTranscription(llmtest.MediaReply{Status: 401})
	_, err := mediamodels.NewTranscriber(service(t, llm, "whisper-1")).Transcribe(context.Background(), "a.mp3", strings.NewReader("x"))
	checkFailure(t, err, "check media.transcription.api_key")
}

func testPicture(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(2, 1, color.RGBA{G: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCreateImageReturnsTheServersPicture(t *testing.T) {
	llm := newFake(t)
	pic := testPicture(t)
	llm.EnqueueImage(llmtest.MediaReply{Data: pic})
	got, err := mediamodels.NewImageMaker(service(t, llm, "gpt-image-1")).CreateImage(context.Background(), "a red fox", "1024x1024")
	if err != nil || !bytes.Equal(got, pic) {
		t.Fatalf("CreateImage = %d bytes, %v; want the scripted PNG", len(got), err)
	}
	reqs := llm.ImageGenerations()
	if len(reqs) != 1 || reqs[0] != (llmtest.ImageRequest{Model: "gpt-image-1", Prompt: "a red fox", Size: "1024x1024",
		ResponseFormat: "b64_json", N: 1, Auth: "Bearer " + testKey}) {
		t.Errorf("the server received %+v", reqs)
	}
}

func TestCreateImageRefusesWhatIsNoPicture(t *testing.T) {
	llm := newFake(t)
	llm.EnqueueImage(llmtest.MediaReply{Data: []byte("#!/bin/sh\necho pwned\n")}, llmtest.MediaReply{Status: 503},
		llmtest.MediaReply{Garbage: `{"data": []}`})
	m := mediamodels.NewImageMaker(service(t, llm, "gpt-image-1"))
	for _, want := range [][]string{
		{"media.images", "not a picture"},
		{"media.images", "HTTP 503"},
		{"media.images", "no b64_json image"},
	} {
		_, err := m.CreateImage(context.Background(), "x", "")
		checkFailure(t, err, want...)
	}
}

func TestSpeakStreamsOpusInTheVoice(t *testing.T) {
	llm := newFake(t)
	sp := mediamodels.NewSpeaker(service(t, llm, "tts-1"), "alloy")
	for _, tc := range []struct{ voice, want string }{{"", "alloy"}, {"nova", "nova"}} {
		rc, err := sp.Speak(context.Background(), "hello there", tc.voice)
		if err != nil {
			t.Fatal(err)
		}
		audio, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(audio) != "OggShello there" {
			t.Fatalf("Speak audio = %q, %v; want the server's bytes", audio, err)
		}
		last := llm.Speeches()[len(llm.Speeches())-1]
		if last != (llmtest.SpeechRequest{Model: "tts-1", Input: "hello there", Voice: tc.want, ResponseFormat: "opus", Auth: "Bearer " + testKey}) {
			t.Errorf("voice %q: the server received %+v", tc.voice, last)
		}
	}
}

func TestSpeakRefusesWhatIsNotOgg(t *testing.T) {
	llm := newFake(t)
	llm.EnqueueSpeech(llmtest.MediaReply{Garbage: "<html>Bad gateway</html>"}, llmtest.MediaReply{Data: []byte("ID3\x03mp3")},
		llmtest.MediaReply{Status: 404})
	sp := mediamodels.NewSpeaker(service(t, llm, "tts-1"), "alloy")
	for _, want := range [][]string{
		{"media.tts", "not Ogg Opus"},
		{"media.tts", "not Ogg Opus"},
		{"media.tts", "check media.tts.model and media.tts.base_url"},
	} {
		rc, err := sp.Speak(context.Background(), "hi", "")
		if rc != nil {
			rc.Close()
		}
		checkFailure(t, err, want...)
	}
}

func TestReadImageShowsTheModelThePicture(t *testing.T) {
	llm := newFake(t)
	llm.Enqueue(llmtest.Reply{Text: "a green dot"})
	pic := testPicture(t)
	answer, err := mediamodels.NewImageReader(service(t, llm, "gpt-4o-mini")).ReadImage(context.Background(), "image/png", pic, "what is in it?")
	if err != nil || answer != "a green dot" {
		t.Fatalf("ReadImage = %q, %v", answer, err)
	}
	req := llm.Requests()[0]
	user := req.Messages[len(req.Messages)-1]
	if req.Model != "gpt-4o-mini" || user.Content != "what is in it?" || len(user.Images) != 1 || !bytes.Equal(user.Images[0].Data, pic) {
		t.Fatalf("the model received %+v (model %s); want the prompt and the exact picture", user, req.Model)
	}
}

func TestReadImageRefusesWhatIsNoPicture(t *testing.T) {
	llm := newFake(t)
	_, err := mediamodels.NewImageReader(service(t, llm, "gpt-4o-mini")).ReadImage(context.Background(), "image/png", []byte("#!/bin/sh"), "")
	checkFailure(t, err, "media.vision", "not a picture")
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("%d requests sent for a file that is no picture", n)
	}
}

func TestFromConfigTurnsOnWhatHasAModel(t *testing.T) {
	llm := newFake(t)
	m := config.Defaults().Media
	off := mediamodels.FromConfig(m, config.LLM{Provider: "openai", BaseURL: llm.URL()}, nil)
	if off.Transcriber != nil || off.ImageReader != nil || off.ImageMaker != nil || off.Speaker != nil {
		t.Fatalf("no models set, yet %+v", off)
	}
	_, err := off.Speaker.Speak(context.Background(), "hi", "")
	checkFailure(t, err, "media.tts", "not configured", "set media.tts.model")

	m.TTS.Model, m.Transcription.Model = "tts-1", "whisper-1"
	on := mediamodels.FromConfig(m, config.LLM{Provider: "openai", BaseURL: llm.URL(), APIKey: testKey, Timeout: time.Minute}, nil)
	if on.Speaker == nil || on.Transcriber == nil || on.ImageMaker != nil || on.ImageReader != nil {
		t.Fatalf("tts and transcription set: %+v", on)
	}
	rc, err := on.Speaker.Speak(context.Background(), "borrowed", "")
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if got := llm.Speeches(); len(got) != 1 || got[0].Voice != "alloy" || got[0].Auth != "Bearer "+testKey {
		t.Errorf("speech with llm's URL and key and the default voice: %+v", got)
	}
}

// refusingMeter refuses every call once refuse is set and keeps what it
// was told.
type refusingMeter struct {
	refuse   bool
	admitted []agentcore.MeteredCall
	recorded []agentcore.Usage
}

func (m *refusingMeter) Admit(_ context.Context, c agentcore.MeteredCall) error {
	m.admitted = append(m.admitted, c)
	if m.refuse {
		return &agentcore.RefusedError{Reply: "⛔ Budget used up: your daily budget of 10 tokens is spent."}
	}
	return nil
}

func (m *refusingMeter) Record(_ context.Context, _ agentcore.MeteredCall, u agentcore.Usage) {
	m.recorded = append(m.recorded, u)
}

func TestReadImageIsMeteredLikeTheAgentsCalls(t *testing.T) {
	llm := newFake(t)
	llm.Enqueue(llmtest.Reply{Text: "a green dot"})
	meter := &refusingMeter{}
	svc := service(t, llm, "gpt-4o-mini")
	svc.Meter = meter
	reader := mediamodels.NewImageReader(svc)
	call := tools.Call{Channel: "telegram", ChatID: "42", UserID: "telegram:7", Session: "helper/telegram:42", Agent: "helper"}
	ctx := tools.WithCall(context.Background(), call)
	if _, err := reader.ReadImage(ctx, "image/png", testPicture(t), ""); err != nil {
		t.Fatal(err)
	}
	if len(meter.admitted) != 1 || meter.admitted[0].Call != call || meter.admitted[0].Model != "gpt-4o-mini" {
		t.Fatalf("admitted %+v; want the tool call's run and the vision model", meter.admitted)
	}
	if len(meter.recorded) != 1 || meter.recorded[0].InputTokens+meter.recorded[0].CacheReadTokens == 0 || meter.recorded[0].OutputTokens == 0 {
		t.Fatalf("recorded %+v; want the call's usage", meter.recorded)
	}

	meter.refuse = true
	_, err := reader.ReadImage(ctx, "image/png", testPicture(t), "")
	checkFailure(t, err, "media.vision", "not read", "Budget used up")
	if n := len(llm.Requests()); n != 1 {
		t.Errorf("the vision model got %d requests; a refused call must not reach it", n)
	}
}
