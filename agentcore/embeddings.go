package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

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
	api   llmAPI
	model string
	retry RetryOptions
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
	return &Embedder{api: openAIAPI(o.BaseURL, o.APIKey, nil, timeout), model: o.Model, retry: retry}
}

// Embed implements tools.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	err := e.retry.do(ctx, "embeddings", func() error { return e.embed(ctx, texts, &resp) })
	if err != nil {
		return nil, fmt.Errorf("embeddings (%s): %w", e.model, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings (%s): %d vectors for %d texts", e.model, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) {
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

// embed makes one call and decodes its answer into resp.
func (e *Embedder) embed(ctx context.Context, texts []string, resp any) error {
	payload, err := json.Marshal(map[string]any{"model": e.model, "input": texts})
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", e.api.provider, err)
	}
	c, err := e.api.post(ctx, "embeddings", "application/json", payload)
	if err != nil {
		return err
	}
	defer c.close()
	if err := json.NewDecoder(c.resp.Body).Decode(resp); err != nil {
		return e.api.failRead(ctx, err)
	}
	return nil
}
