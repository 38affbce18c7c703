package agentcore

import (
	"context"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/switchboard-chat/switchboard/tools"
)

// EmbedderOptions configures an OpenAI-compatible embeddings client.
type EmbedderOptions struct {
	BaseURL, APIKey, Model string
	Timeout                time.Duration
	// Logger receives a warning when a call is retried (default: discarded).
	Logger *slog.Logger
}

// Embedder turns texts into vectors through any OpenAI-compatible
// /embeddings endpoint (OpenAI, Ollama, vLLM…), for memory search by
// meaning.
type Embedder struct {
	api    llmAPI
	client openai.EmbeddingService
	model  string
	retry  RetryOptions
}

var _ tools.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder.
func NewEmbedder(o EmbedderOptions) *Embedder {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	// A failure that may pass (rate limit, 5xx, network) is tried once more,
	// after about half a second or the server's Retry-After (at most 10 s).
	retry := RetryOptions{Attempts: 2, Max: 10 * time.Second, Logger: o.Logger}.withDefaults()
	api, ro := openAIClientOptions(OpenAIOptions{BaseURL: o.BaseURL, APIKey: o.APIKey, Timeout: timeout})
	return &Embedder{api: api, client: openai.NewEmbeddingService(ro...), model: o.Model, retry: retry}
}

// Embed implements tools.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var resp *openai.CreateEmbeddingResponse
	err := e.retry.do(ctx, "embeddings", func() error {
		var err error
		resp, err = e.embed(ctx, texts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("embeddings (%s): %w", e.model, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings (%s): %d vectors for %d texts", e.model, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= int64(len(texts)) {
			return nil, fmt.Errorf("embeddings (%s): vector index %d out of range", e.model, d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}

// embed makes one call.
func (e *Embedder) embed(ctx context.Context, texts []string) (*openai.CreateEmbeddingResponse, error) {
	if e.api.urlErr != nil {
		return nil, e.api.urlErr
	}
	resp, err := e.client.New(ctx, openai.EmbeddingNewParams{
		Model: e.model,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
	}, option.WithMiddleware(answerIsJSON))
	if err != nil {
		return nil, e.api.failRead(ctx, err)
	}
	return resp, nil
}

// answerIsJSON marks a successful answer as JSON when its Content-Type says
// otherwise: the SDK refuses to decode a body it is not told is JSON, and
// compatible embedding servers commonly send none, so net/http guesses
// text/plain. Error answers are read by llmAPI.checkStatus whatever their type.
func answerIsJSON(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		resp.Header.Set("Content-Type", "application/json")
	}
	return resp, nil
}
