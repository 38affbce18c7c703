package agentcore

import (
	"context"

	"github.com/openai/openai-go/v3/option"
)

// OpenAIService is the plumbing of a client of an OpenAI-compatible
// endpoint other than chat (audio, images), shared with the providers: the
// same SDK options (no environment, no SDK retries) and the same reading of
// failures into a *ProviderError that names the config section to check
// and never holds the API key.
type OpenAIService struct {
	api  llmAPI
	opts []option.RequestOption
}

// NewOpenAIService returns the plumbing for the server o describes;
// o.Model is not used.
func NewOpenAIService(o OpenAIOptions) *OpenAIService {
	api, ro := openAIClientOptions(o)
	return &OpenAIService{api: api, opts: ro}
}

// Options are the SDK request options of every call to the server.
func (s *OpenAIService) Options() []option.RequestOption { return s.opts }

// BaseURL is the server's base URL as configured (OpenAI's when empty).
func (s *OpenAIService) BaseURL() string { return s.api.baseURL }

// Usable returns why the base URL cannot be used, or nil.
func (s *OpenAIService) Usable() error { return s.api.urlErr }

// Fail turns the error of an SDK call made with Options into a
// *ProviderError saying what failed and what to check; ctx is the
// caller's.
func (s *OpenAIService) Fail(ctx context.Context, err error) error { return s.api.failRead(ctx, err) }
