package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// leanModel is the model a load run talks to unless -model llmtest is given:
// an OpenAI-compatible streamed chat completion endpoint that answers what
// llmtest's Echo answers ("echo: <last user message> (history: N user
// messages)") in the same chunks, but cheaply. llmtest decodes and checks
// every request in full and flushes each chunk on its own, work that takes
// CPU from the cores the daemon is measured on. This one finds the last
// user message by its bytes and writes the whole stream at once.
//
// It relies on the daemon's compact encoding, where a user message with text
// reads {"role":"user","content":"…"} or, as openai-go writes it,
// {"content":"…","role":"user"}. A request it cannot read is answered with
// HTTP 400 and counted, and the run reports it.
type leanModel struct {
	ts   *httptest.Server
	seq  atomic.Int64
	bufs sync.Pool // *bytes.Buffer

	refused refusals
	// onUser, when set before the daemon starts, is told each request's
	// last user message (the jobs mode reads the job and slot from it).
	onUser func(string)
}

// newLeanModel serves the fake on a loopback port.
func newLeanModel() *leanModel {
	m := &leanModel{bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
	m.ts = httptest.NewServer(m)
	return m
}

// URL returns the base URL the daemon's llm.base_url takes.
func (m *leanModel) URL() string { return m.ts.URL + "/v1" }

// Close stops the server.
func (m *leanModel) Close() { m.ts.Close() }

// complaints returns how many requests the fake could not answer, and the
// reason it gave the last of them; a nil fake has none.
func (m *leanModel) complaints() (int, string) {
	if m == nil {
		return 0, ""
	}
	return m.refused.complaints()
}

// Marks the fake looks for in a request body.
var (
	messagesMark = []byte(`"messages":[`)
	userMark     = []byte(`{"role":"user","content":"`)
	userCount    = []byte(`"role":"user"`)
	userLast     = []byte(`","role":"user"}`) // the end of {"content":"…","role":"user"}
	contentMark  = []byte(`{"content":"`)
	streamMark   = []byte(`"stream":true`)
	usageMark    = []byte(`"include_usage":true`)
	// The answer's bound (agentcore sends one of them, as the model's API
	// wants); outside a JSON string, as its quotes are not escaped.
	maxTokensMarks = [][]byte{[]byte(`"max_completion_tokens":`), []byte(`"max_tokens":`)}
)

// maxTokens returns the bound on the answer a request body sets, 0 for
// none.
func maxTokens(body []byte) int {
	for _, mark := range maxTokensMarks {
		if at := bytes.Index(body, mark); at >= 0 {
			digits := body[at+len(mark):]
			end := 0
			for end < len(digits) && digits[end] >= '0' && digits[end] <= '9' {
				end++
			}
			n, _ := strconv.Atoi(string(digits[:end]))
			return n
		}
	}
	return 0
}

// maxRequest bounds a request body the fake reads.
const maxRequest = 4 << 20

func (m *leanModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		m.refuse(w, http.StatusNotFound, fmt.Sprintf("load's model fake serves only POST /v1/chat/completions, not %s %s", r.Method, r.URL.Path))
		return
	}
	in := m.bufs.Get().(*bytes.Buffer)
	defer m.bufs.Put(in)
	in.Reset()
	if _, err := in.ReadFrom(io.LimitReader(r.Body, maxRequest+1)); err != nil {
		m.refuse(w, http.StatusBadRequest, "read the request: "+err.Error())
		return
	}
	body := in.Bytes()
	limit := maxTokens(body)
	if len(body) > maxRequest {
		m.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is larger than the fake reads (%d bytes)", maxRequest))
		return
	}
	size := len(body)
	// The daemon sends the tool list first (most of the body) and the
	// messages, then the stream options, last. Found from the end, where
	// it is near, "messages":[ starts what the marks below are looked for
	// in; inside a JSON string its quotes would be escaped.
	at := bytes.LastIndex(body, messagesMark)
	if at < 0 {
		m.refuse(w, http.StatusBadRequest, `no "messages":[ in the request`)
		return
	}
	body = body[at:]
	if !bytes.Contains(body, streamMark) {
		m.refuse(w, http.StatusBadRequest, `load's model fake answers only streamed requests ("stream":true)`)
		return
	}
	last, err := lastUserText(body)
	if err != nil {
		m.refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if m.onUser != nil {
		m.onUser(last)
	}
	text := "echo: " + last + " (history: " + strconv.Itoa(bytes.Count(body, userCount)) + " user messages)"
	out := m.bufs.Get().(*bytes.Buffer)
	defer m.bufs.Put(out)
	out.Reset()
	writeEchoStream(out, m.seq.Add(1), text, limit, size/4, bytes.Contains(body, usageMark))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(out.Bytes())
}

// refuse answers an OpenAI-style error and counts it.
func (m *leanModel) refuse(w http.ResponseWriter, status int, msg string) {
	m.refused.refuse(w, status, msg, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

// lastUserText returns the text of the last user message in a compact chat
// request body. Inside a JSON string every quote is escaped, so the mark
// cannot match message text.
func lastUserText(body []byte) (string, error) {
	at, mark := bytes.LastIndex(body, userMark), userMark
	if last := bytes.LastIndex(body, userLast); last > at {
		at, mark = bytes.LastIndex(body[:last], contentMark), contentMark
	}
	if at < 0 {
		return "", fmt.Errorf(`no user message with text content ({"role":"user","content":"…"}) in the request`)
	}
	start := at + len(mark) - 1 // the opening quote
	end := start + 1
	for end < len(body) && body[end] != '"' {
		if body[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(body) {
		return "", fmt.Errorf("the last user message's content does not end")
	}
	var text string
	if err := json.Unmarshal(body[start:end+1], &text); err != nil {
		return "", fmt.Errorf("the last user message's content: %w", err)
	}
	return text, nil
}

// writeEchoStream writes the server-sent events of one streamed completion
// of text, in the chunks llmtest sends: a role chunk, one chunk per word,
// a finish chunk, the usage chunk when asked for, and [DONE].
// Token counts are made up (a quarter of the request's bytes, a word each).
// Like a model, it stops after maxTokens words (0: no bound) with
// finish_reason "length": a summary request echoes a long transcript.
func writeEchoStream(out *bytes.Buffer, seq int64, text string, maxTokens, promptTokens int, usage bool) {
	head := `data: {"id":"chatcmpl-load-` + strconv.FormatInt(seq, 10) + `","object":"chat.completion.chunk","created":0,"model":"test-model","system_fingerprint":null,"choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}]}` + "\n\n"
	out.WriteString(head)
	out.WriteString(`{"role":"assistant","content":"","refusal":null}`)
	out.WriteString(tail)
	words, finish := 0, "stop"
	for rest := text; rest != ""; {
		if words == maxTokens && maxTokens > 0 {
			finish = "length"
			break
		}
		piece := rest
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			piece = rest[:i+1]
		}
		rest = rest[len(piece):]
		words++
		quoted, _ := json.Marshal(piece)
		out.WriteString(head)
		out.WriteString(`{"content":`)
		out.Write(quoted)
		out.WriteString("}")
		out.WriteString(tail)
	}
	out.WriteString(head)
	out.WriteString(`{},"logprobs":null,"finish_reason":"` + finish + `"}]}` + "\n\n")
	if usage {
		fmt.Fprintf(out, `data: {"id":"chatcmpl-load-%d","object":"chat.completion.chunk","created":0,"model":"test-model","system_fingerprint":null,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
			seq, promptTokens, words, promptTokens+words)
	}
	out.WriteString("data: [DONE]\n\n")
}
