// Package llmtest is a scripted OpenAI-compatible server for tests: it serves
// chat completions (streamed and not), the model list, embeddings and the
// media endpoints (transcriptions, image generations, speech) over a real
// HTTP listener, answers with scripted replies or a deterministic echo, and records
// every request it receives.
//
// With no script (deploy/fakes serves it so), the server answers with Echo,
// which a person or a shell script steers by what the user writes:
//
//   - "CALL_TOOL:exec {"command":"echo hi"}" anywhere in the last user
//     message makes the model call exec with that JSON object as its
//     arguments (any tool: "CALL_TOOL:datetime" calls datetime with {});
//     once the tool has answered, the reply is "tool exec said: <result>",
//     so a command that needs approval shows its outcome — its output, or
//     "the approvers denied this command" — in the reply;
//   - "SAY: some text" makes the reply exactly "some text";
//   - anything else is answered "echo: <message> (history: N user messages)".
//
// Usage counts words as tokens. The server keeps a prompt cache of its
// own: a request that starts with the same messages, byte for byte, as an
// earlier answered request to the same model with the same tools reports
// those messages' tokens as prompt_tokens_details.cached_tokens (see
// Request.CachedTokens), so a conversation whose earlier turns go out
// unchanged shows a cache share.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// ToolCall is one tool call a scripted reply makes.
type ToolCall struct {
	ID        string // generated ("call_<n>") when empty
	Name      string
	Arguments string // raw JSON text, sent as-is (may be invalid on purpose)
}

// Reply is what the server answers to one chat request.
type Reply struct {
	// Text is the assistant's content.
	Text string
	// ToolCalls are the tools the assistant calls.
	ToolCalls []ToolCall
	// Status, when non-zero, makes the server answer with this HTTP status and
	// an OpenAI-style error body instead of a completion.
	Status int
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
	// Delay is waited before answering (cut short when the client goes away
	// or the server closes).
	Delay time.Duration
	// StreamError, when non-empty and the request streams, makes the server
	// send Text and then an error event with this message instead of
	// finishing the completion.
	StreamError string
	// FinishReason overrides the finish reason ("stop", or "tool_calls" when
	// there are tool calls).
	FinishReason string
	// Pace, when positive and the request streams, is waited before each
	// word of Text: a model that writes at a fixed pace. The stream ends
	// early when the client goes away or the server closes.
	Pace time.Duration
}

// Message is one message of a recorded request.
type Message struct {
	Role       string
	Content    string // text content; parts of an array content are joined
	ToolCalls  []ToolCall
	ToolCallID string
	// Images are the image_url parts of an array content, in order.
	Images []Image
}

// Request is one chat request as the server decoded it.
type Request struct {
	Model     string
	Messages  []Message
	Tools     []string // names of the function tools offered
	Stream    bool
	MaxTokens int // max_completion_tokens, else max_tokens; 0 when absent
	// Body is the raw JSON body, for assertions on the exact wire shape.
	Body json.RawMessage
	// FirstWord is when the first word of the streamed answer was
	// written (zero until then, and for an answer without text or not
	// streamed).
	FirstWord time.Time
	// CachedTokens are the prompt tokens the answer reports as read from
	// the prompt cache (see the package doc).
	CachedTokens int

	prompt prompt
}

// Server is a running fake. All methods are safe for concurrent use.
type Server struct {
	ts   *httptest.Server
	done chan struct{}

	mu        sync.Mutex
	responder func(Request) Reply
	queue     []Reply
	requests  []Request
	seq       int // completions served, for ids
	abandoned int // requests whose client went away mid-reply
	closeOnce sync.Once

	synonyms   map[string]string
	embedCalls int
	models     []string       // what GET /v1/models lists; none: 404
	failing    map[string]int // model → the HTTP status its requests get (FailModel)

	media media // the audio and image endpoints' scripts and records

	prompts []prompt // of the answered chat requests, for the prompt cache
}

// NewServer starts a fake on a loopback port. Unscripted requests get the
// deterministic reply of Echo. Close it when done.
func NewServer() *Server {
	s := &Server{done: make(chan struct{}), responder: Echo, models: []string{"llmtest"}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("POST /v1/embeddings", s.serveEmbeddings)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.serveTranscription)
	mux.HandleFunc("POST /v1/images/generations", s.serveImageGeneration)
	mux.HandleFunc("POST /v1/audio/speech", s.serveSpeech)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, 0, fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path))
	})
	s.ts = httptest.NewServer(mux)
	return s
}

// URL returns the base URL clients use, ending in /v1.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close stops the server; replies still waiting on a Delay end at once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// Handle sets the responder used when no enqueued reply is left. A nil f
// restores Echo.
func (s *Server) Handle(f func(Request) Reply) {
	if f == nil {
		f = Echo
	}
	s.mu.Lock()
	s.responder = f
	s.mu.Unlock()
}

// Enqueue adds one-shot replies, used in order before the responder.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// Fail makes the next times requests fail with HTTP status.
func (s *Server) Fail(status, times int) {
	for range times {
		s.Enqueue(Reply{Status: status})
	}
}

// Requests returns every chat request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// next records req, with its cached tokens, and picks its reply and
// completion number.
func (s *Server) next(req *Request) (Reply, int) {
	req.prompt = promptOf(*req)
	s.mu.Lock()
	req.CachedTokens = cachedTokens(req.prompt, s.prompts)
	s.requests = append(s.requests, *req)
	s.seq++ // the request is s.requests[seq-1]
	seq := s.seq
	if status := s.failing[req.Model]; status != 0 {
		s.mu.Unlock()
		return Reply{Status: status}, seq
	}
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, seq
	}
	f := s.responder
	s.mu.Unlock()
	return f(*req), seq
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	wr, req, err := decodeRequest(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, 0, err.Error())
		return
	}
	reply, seq := s.next(&req)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			s.abandon()
			return
		case <-s.done:
			return
		}
	}
	if reply.Status != 0 {
		writeError(w, reply.Status, reply.RetryAfter, fmt.Sprintf("llmtest: scripted failure (HTTP %d)", reply.Status))
		return
	}
	if msg := validate(req); msg != "" {
		writeError(w, http.StatusBadRequest, 0, msg)
		return
	}
	s.remember(req.prompt)
	c := completion{
		id:      fmt.Sprintf("chatcmpl-llmtest-%d", seq),
		model:   req.Model,
		created: time.Now().Unix(),
		reply:   withCallIDs(reply, seq),
		usage:   usageFor(req, reply),
	}
	if wr.Stream {
		c.writeStream(w, wr.StreamOptions != nil && wr.StreamOptions.IncludeUsage, s.pacer(r, seq))
		return
	}
	c.writeJSON(w)
}

// pacer returns what writeStream waits with before each word of
// completion seq: false when the client went away or the server closed.
// It records when the first word goes out.
func (s *Server) pacer(r *http.Request, seq int) func(time.Duration) bool {
	first := true
	return func(d time.Duration) (ok bool) {
		defer func() {
			if ok && first {
				first = false
				s.mu.Lock()
				s.requests[seq-1].FirstWord = time.Now()
				s.mu.Unlock()
			}
		}()
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			s.abandon()
		case <-s.done:
		}
		return false
	}
}

// abandon counts a request whose client went away before its reply was
// done.
func (s *Server) abandon() {
	s.mu.Lock()
	s.abandoned++
	s.mu.Unlock()
}

// Abandoned returns how many requests' clients went away while the server
// waited out their reply's Delay or Pace (a cancelled model call).
func (s *Server) Abandoned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}

// withCallIDs fills in missing tool call ids, unique per completion.
func withCallIDs(r Reply, seq int) Reply {
	calls := make([]ToolCall, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", seq, i)
		}
		calls[i] = c
	}
	r.ToolCalls = calls
	return r
}

// writeError sends an OpenAI-style error body.
func writeError(w http.ResponseWriter, status, retryAfter int, msg string) {
	typ := "server_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "invalid_request_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status < 500:
		typ = "invalid_request_error"
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(retryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil},
	})
}
