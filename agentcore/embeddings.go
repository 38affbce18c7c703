package agentcore

import (
	"context"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/switchboard-chat/switchboard/tools"
)

// EmbedderOptions configures an OpenAI-compatible embeddings client.
type EmbedderOptions struct {
	BaseURL, APIKey, Model string
	Timeout                time.Duration
}

// Embedder turns texts into vectors through any OpenAI-compatible
// /embeddings endpoint (OpenAI, Ollama, vLLM…), for memory search by
// meaning.
type Embedder struct {
	client openai.EmbeddingService
	model  string
}

var _ tools.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder.
func NewEmbedder(o EmbedderOptions) *Embedder {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	_, ro := openAIClientOptions(o.BaseURL, o.APIKey, 1)
	return &Embedder{client: openai.NewEmbeddingService(append(ro, option.WithRequestTimeout(timeout))...), model: o.Model}
}

// Embed implements tools.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := e.client.New(ctx, openai.EmbeddingNewParams{
		Model: openai.EmbeddingModel(e.model),
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
	})
	if err != nil {
		return nil, fmt.Errorf("embeddings (%s): %w", e.model, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings (%s): %d vectors for %d texts", e.model, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) {
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
