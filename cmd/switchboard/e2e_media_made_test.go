package main

import (
	"bytes"
	"image/color"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// sdToolFile is a media tool's call in a person's message and the file
// it must put in the chat, unchanged.
type sdToolFile struct {
	tool, call string
	name       string // the file's name in the chat
	body       []byte
}

// sdToolFiles scripts on llm a picture for create_image and speech for
// tts, and returns the two calls with what the fake model makes for them.
func sdToolFiles(t *testing.T, llm *llmtest.Server) []sdToolFile {
	t.Helper()
	picture := pngOf(t, 4, 4, color.RGBA{R: 10, G: 200, B: 90, A: 255})
	speech := append([]byte("OggS\x00\x02spoken:"), bytes.Repeat([]byte{0x11, 0x22, 0x33}, 200)...)
	llm.EnqueueImage(llmtest.MediaReply{Data: picture})
	llm.EnqueueSpeech(llmtest.MediaReply{Data: speech})
	return []sdToolFile{
		{"create_image", `CALL_TOOL:create_image {"prompt":"a green square"}`, "image.png", picture},
		{"tts", `CALL_TOOL:tts {"text":"good morning"}`, "voice.ogg", speech},
	}
}

// sdWantMadeOnce checks that the image and speech services were each
// asked once, for what sdToolFiles' calls ask, with withMediaModels'
// models.
func sdWantMadeOnce(t *testing.T, llm *llmtest.Server) {
	t.Helper()
	if im := llm.ImageGenerations(); len(im) != 1 || im[0].Prompt != "a green square" || im[0].Model != "gpt-image-1" {
		t.Errorf("image generations = %+v, want one of \"a green square\" with gpt-image-1", im)
	}
	if sp := llm.Speeches(); len(sp) != 1 || sp[0].Input != "good morning" || sp[0].Model != "tts-1" {
		t.Errorf("speeches = %+v, want one of \"good morning\" with tts-1", sp)
	}
}
