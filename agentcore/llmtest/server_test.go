package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

func newClient(t *testing.T, s *llmtest.Server) *openai.Client {
	t.Helper()
	c := openai.NewClient(
		option.WithBaseURL(s.URL()),
		option.WithAPIKey("test-key"),
		option.WithMaxRetries(0),
	)
	return &c
}

func newServer(t *testing.T) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	return s
}

func TestURLEndsInV1(t *testing.T) {
	s := newServer(t)
	if !strings.HasSuffix(s.URL(), "/v1") || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL() = %q, want http://127.0.0.1:<port>/v1", s.URL())
	}
}

func TestNonStreamingEcho(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m1",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("be brief"),
			openai.UserMessage("first"),
			openai.AssistantMessage("echo: first"),
			openai.UserMessage("second"),
		},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	want := "echo: second (history: 2 user messages)"
	if got := res.Choices[0].Message.Content; got != want {
		t.Fatalf("content = %q, want %q", got, want)
	}
	if res.Choices[0].FinishReason != "stop" || res.Model != "m1" {
		t.Fatalf("finish = %q model = %q", res.Choices[0].FinishReason, res.Model)
	}
	if res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 {
		t.Fatalf("usage = %+v, want non-zero", res.Usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Stream || len(reqs[0].Messages) != 4 || reqs[0].Messages[0].Role != "system" {
		t.Fatalf("recorded %+v", reqs)
	}
}

// collect streams a request and returns the chunks.
func collect(t *testing.T, c *openai.Client, params openai.ChatCompletionNewParams) ([]openai.ChatCompletionChunk, error) {
	t.Helper()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	defer stream.Close()
	var chunks []openai.ChatCompletionChunk
	for stream.Next() {
		chunks = append(chunks, stream.Current())
	}
	return chunks, stream.Err()
}

func TestStreamingTextInSeveralChunksWithUsage(t *testing.T) {
	s := newServer(t)
	s.Enqueue(llmtest.Reply{Text: "one two three four"})
	chunks, err := collect(t, newClient(t, s), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	var text strings.Builder
	pieces, finish := 0, ""
	for _, ch := range chunks {
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				pieces++
				text.WriteString(c.Delta.Content)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if text.String() != "one two three four" || pieces < 2 {
		t.Fatalf("text %q in %d pieces, want the reply in several", text.String(), pieces)
	}
	if finish != "stop" {
		t.Fatalf("finish = %q", finish)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage.TotalTokens == 0 {
		t.Fatalf("last chunk = %s, want the usage chunk", last.RawJSON())
	}
	if !s.Requests()[0].Stream {
		t.Fatal("request not recorded as streaming")
	}
}

func TestStreamingToolCallsAccumulate(t *testing.T) {
	s := newServer(t)
	args := `{"city":"Berlin","days":3}`
	s.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "call_a", Name: "weather", Arguments: args},
		{Name: "datetime", Arguments: "{}"},
	}})
	chunks, err := collect(t, newClient(t, s), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "weather", Parameters: openai.FunctionParameters{"type": "object"},
		})},
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	var acc openai.ChatCompletionAccumulator
	argChunks := 0
	for _, ch := range chunks {
		if !acc.AddChunk(ch) {
			t.Fatalf("accumulator rejected %s", ch.RawJSON())
		}
		for _, c := range ch.Choices {
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index == 0 && tc.Function.Arguments != "" {
					argChunks++
				}
			}
		}
	}
	if argChunks < 2 {
		t.Fatalf("arguments arrived in %d chunks, want several", argChunks)
	}
	calls := acc.Choices[0].Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("tool calls = %d, want 2", len(calls))
	}
	if calls[0].ID != "call_a" || calls[0].Function.Name != "weather" || calls[0].Function.Arguments != args {
		t.Fatalf("call 0 = %+v", calls[0])
	}
	if calls[1].ID == "" || calls[1].Function.Name != "datetime" || calls[1].Function.Arguments != "{}" {
		t.Fatalf("call 1 = %+v", calls[1])
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", acc.Choices[0].FinishReason)
	}
	if got := s.Requests()[0].Tools; len(got) != 1 || got[0] != "weather" {
		t.Fatalf("recorded tools = %v", got)
	}
}

func TestErrorInjection(t *testing.T) {
	s := newServer(t)
	s.Enqueue(llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: 7})
	s.Fail(http.StatusInternalServerError, 1)
	c := newClient(t, s)
	params := openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}

	_, err := c.Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 {
		t.Fatalf("first call err = %v, want HTTP 429", err)
	}
	if got := apiErr.Response.Header.Get("Retry-After"); got != "7" {
		t.Fatalf("Retry-After = %q, want 7", got)
	}
	if !strings.Contains(apiErr.RawJSON(), "rate_limit") {
		t.Fatalf("error body = %s, want an OpenAI-style rate limit error", apiErr.RawJSON())
	}

	_, err = collect(t, c, params)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("second call err = %v, want HTTP 500", err)
	}

	res, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil || !strings.HasPrefix(res.Choices[0].Message.Content, "echo: hi") {
		t.Fatalf("third call = %v, %v; want the echo again", res, err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Fatalf("recorded %d requests, want 3", n)
	}
}

func TestStreamErrorEvent(t *testing.T) {
	s := newServer(t)
	s.Enqueue(llmtest.Reply{Text: "partial answer", StreamError: "model overloaded"})
	_, err := collect(t, newClient(t, s), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err == nil || !strings.Contains(err.Error(), "model overloaded") {
		t.Fatalf("err = %v, want the stream's error event", err)
	}
}

func TestEchoToolRoundTrip(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	user := openai.UserMessage("what time is it? CALL_TOOL:datetime")
	res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{user},
	})
	if err != nil {
		t.Fatalf("first: %v", err)
	}
	msg := res.Choices[0].Message
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "datetime" || msg.ToolCalls[0].Function.Arguments != "{}" {
		t.Fatalf("first reply = %s, want a datetime call", msg.RawJSON())
	}
	res, err = c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{
			user, msg.ToParam(), openai.ToolMessage("12:00", msg.ToolCalls[0].ID),
		},
	})
	if err != nil {
		t.Fatalf("second: %v", err)
	}
	if got := res.Choices[0].Message.Content; got != "tool datetime said: 12:00" {
		t.Fatalf("second reply = %q", got)
	}
	second := s.Requests()[1]
	if second.Messages[1].ToolCalls[0].Name != "datetime" || second.Messages[2].ToolCallID != msg.ToolCalls[0].ID {
		t.Fatalf("recorded second request = %+v", second)
	}
}

func TestRejectsOrphanToolMessage(t *testing.T) {
	s := newServer(t)
	_, err := newClient(t, s).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage("hi"), openai.ToolMessage("result", "call_missing"),
		},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.RawJSON(), "call_missing") {
		t.Fatalf("err = %v, want a 400 naming the orphan call", err)
	}
}

func TestHandleResponderAndQueueOrder(t *testing.T) {
	s := newServer(t)
	s.Handle(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "handled " + r.Messages[len(r.Messages)-1].Content}
	})
	s.Enqueue(llmtest.Reply{Text: "queued"})
	c := newClient(t, s)
	var got []string
	for _, in := range []string{"a", "b"} {
		res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(in)},
		})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Choices[0].Message.Content)
	}
	if got[0] != "queued" || got[1] != "handled b" {
		t.Fatalf("replies = %q, want queued then handled b", got)
	}
}

func TestModels(t *testing.T) {
	s := newServer(t)
	page, err := newClient(t, s).Models.List(context.Background())
	if err != nil {
		t.Fatalf("list models: %v", err)
	}
	if len(page.Data) == 0 || page.Data[0].ID == "" {
		t.Fatalf("models = %+v", page.Data)
	}
}

func TestRecordsRawBody(t *testing.T) {
	s := newServer(t)
	_, err := newClient(t, s).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:               "m",
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		MaxCompletionTokens: openai.Int(77),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil || body["model"] != "m" {
		t.Fatalf("body = %s (%v)", r.Body, err)
	}
	if r.MaxTokens != 77 {
		t.Fatalf("MaxTokens = %d, want 77", r.MaxTokens)
	}
}

func TestCancelledDelayedReply(t *testing.T) {
	s := newServer(t)
	s.Enqueue(llmtest.Reply{Delay: 1 << 62, Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newClient(t, s).Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		done <- err
	}()
	for len(s.Requests()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("returned before the delay: %v", err)
		default:
		}
		time.Sleep(5 * time.Millisecond) // poll until the server holds the request

	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCloseEndsDelayedReply(t *testing.T) {
	s := llmtest.NewServer()
	s.Enqueue(llmtest.Reply{Delay: 1 << 62, Text: "never"})
	done := make(chan error, 1)
	go func() {
		_, err := newClient(t, s).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		done <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond) // poll until the server holds the request
	}
	s.Close() // must not wait for the delay
	if err := <-done; err == nil {
		t.Fatal("request succeeded, want a failure after Close")
	}
}
