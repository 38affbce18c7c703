package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"time"
)

// MediaReply is one scripted answer of a media endpoint
// (/audio/transcriptions, /images/generations, /audio/speech).
type MediaReply struct {
	// Text is a transcription's text.
	Text string
	// Data is a generated image (sent as b64_json) or speech's audio.
	Data []byte
	// Status, when non-zero, makes the answer an OpenAI-style error with
	// this HTTP status.
	Status int
	// Garbage, when non-empty, is sent as a 200 answer's whole body
	// instead, as a misconfigured server or a proxy's page would be: as
	// JSON when it starts with { or [, else as HTML.
	Garbage string
}

// TranscriptionRequest is one POST /audio/transcriptions received.
type TranscriptionRequest struct {
	Model          string
	FileName       string // the multipart file's name
	File           []byte // the audio sent
	ResponseFormat string
	Auth           string // the Authorization header
}

// ImageRequest is one POST /images/generations received.
type ImageRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	Size           string `json:"size"`
	ResponseFormat string `json:"response_format"`
	N              int    `json:"n"`
	Auth           string `json:"-"`
}

// SpeechRequest is one POST /audio/speech received.
type SpeechRequest struct {
	Model          string `json:"model"`
	Input          string `json:"input"`
	Voice          string `json:"voice"`
	ResponseFormat string `json:"response_format"`
	Auth           string `json:"-"`
}

// media is the Server's state for the media endpoints.
type media struct {
	transcribeQueue, imageQueue, speechQueue []MediaReply
	transcriptions                           []TranscriptionRequest
	images                                   []ImageRequest
	speeches                                 []SpeechRequest
}

// EnqueueTranscription scripts the next answers of /audio/transcriptions;
// without one the transcript is "transcript of <file name> (<n> bytes)".
func (s *Server) EnqueueTranscription(r ...MediaReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.transcribeQueue = append(s.media.transcribeQueue, r...)
}

// EnqueueImage scripts the next answers of /images/generations; without
// one the image is ImagePNG().
func (s *Server) EnqueueImage(r ...MediaReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.imageQueue = append(s.media.imageQueue, r...)
}

// EnqueueSpeech scripts the next answers of /audio/speech; without one the
// audio is "OggS" followed by the input text.
func (s *Server) EnqueueSpeech(r ...MediaReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media.speechQueue = append(s.media.speechQueue, r...)
}

// Transcriptions returns the transcription requests received, in order.
func (s *Server) Transcriptions() []TranscriptionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TranscriptionRequest(nil), s.media.transcriptions...)
}

// ImageGenerations returns the image generation requests received.
func (s *Server) ImageGenerations() []ImageRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ImageRequest(nil), s.media.images...)
}

// Speeches returns the speech requests received.
func (s *Server) Speeches() []SpeechRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SpeechRequest(nil), s.media.speeches...)
}

// ImagePNG is the picture /images/generations answers when unscripted:
// a 2x2 PNG.
func ImagePNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 1, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// popMedia takes the next scripted reply off q, or returns def.
func popMedia(q *[]MediaReply, def MediaReply) MediaReply {
	if len(*q) == 0 {
		return def
	}
	r := (*q)[0]
	*q = (*q)[1:]
	return r
}

// failed answers r's scripted failure, if it has one, and says so.
func (r MediaReply) failed(w http.ResponseWriter) bool {
	switch {
	case r.Status != 0:
		writeError(w, r.Status, 0, fmt.Sprintf("llmtest: scripted failure (HTTP %d)", r.Status))
		return true
	case r.Garbage != "":
		typ := "text/html"
		if strings.HasPrefix(r.Garbage, "{") || strings.HasPrefix(r.Garbage, "[") {
			typ = "application/json" // JSON of the wrong shape
		}
		w.Header().Set("Content-Type", typ)
		_, _ = io.WriteString(w, r.Garbage)
		return true
	}
	return false
}

func (s *Server) serveTranscription(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, http.StatusBadRequest, 0, "llmtest: want a multipart form: "+err.Error())
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, 0, "llmtest: the form has no file: "+err.Error())
		return
	}
	defer f.Close()
	audio, _ := io.ReadAll(f)
	req := TranscriptionRequest{Model: r.FormValue("model"), FileName: hdr.Filename, File: audio,
		ResponseFormat: r.FormValue("response_format"), Auth: r.Header.Get("Authorization")}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, 0, "llmtest: model is required")
		return
	}
	s.mu.Lock()
	s.media.transcriptions = append(s.media.transcriptions, req)
	reply := popMedia(&s.media.transcribeQueue, MediaReply{Text: fmt.Sprintf("transcript of %s (%d bytes)", hdr.Filename, len(audio))})
	s.mu.Unlock()
	if reply.failed(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"text": reply.Text})
}

// decodeMedia reads a JSON request body into v and answers 400 when it is
// not JSON or ok says a required member (what) is missing.
func decodeMedia(w http.ResponseWriter, r *http.Request, v any, ok func() bool, what string) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(v); err != nil || !ok() {
		writeError(w, http.StatusBadRequest, 0, fmt.Sprintf("llmtest: want a JSON body with %s (%v)", what, err))
		return false
	}
	return true
}

func (s *Server) serveImageGeneration(w http.ResponseWriter, r *http.Request) {
	var req ImageRequest
	if !decodeMedia(w, r, &req, func() bool { return req.Prompt != "" }, "a prompt") {
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	s.media.images = append(s.media.images, req)
	reply := popMedia(&s.media.imageQueue, MediaReply{Data: ImagePNG()})
	s.mu.Unlock()
	if reply.failed(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"created": time.Now().Unix(),
		"data":    []map[string]any{{"b64_json": base64.StdEncoding.EncodeToString(reply.Data)}},
	})
}

func (s *Server) serveSpeech(w http.ResponseWriter, r *http.Request) {
	var req SpeechRequest
	if !decodeMedia(w, r, &req, func() bool { return req.Input != "" }, "an input") {
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	s.media.speeches = append(s.media.speeches, req)
	reply := popMedia(&s.media.speechQueue, MediaReply{Data: []byte("OggS" + req.Input)})
	s.mu.Unlock()
	if reply.failed(w) {
		return
	}
	w.Header().Set("Content-Type", "audio/ogg")
	_, _ = w.Write(reply.Data)
}
