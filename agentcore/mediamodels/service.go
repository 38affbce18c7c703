// Package mediamodels is the client side of the model services media
// uses besides the agent's chat model: transcription, a vision model for
// read_image, image generation and speech, each an OpenAI-compatible
// endpoint reached through the official openai-go SDK. Their method sets
// are those of bot/media's Transcriber, ImageReader, ImageMaker and
// Speaker, which the daemon hands them to.
package mediamodels

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// Service is one configured endpoint.
type Service struct {
	// Config is the config section that sets it up ("media.tts"), named
	// in every error so the operator knows what to check.
	Config string
	// BaseURL of the OpenAI-compatible API; empty is OpenAI's.
	BaseURL string
	// APIKey may be empty for local servers. It is never put in an error.
	APIKey string
	// Model is the model the calls ask for.
	Model string
	// Timeout bounds one call, its answer's body included; 0 means none.
	Timeout time.Duration
	// HTTPClient, when non-nil, replaces a client of the package's own.
	HTTPClient *http.Client
	// Meter, when set, checks the budgets before each call to a chat
	// model (read_image's) and records its tokens, as for the agents'
	// own calls: a picture read by another model is spending too.
	Meter agentcore.Meter
}

// client is what every media client keeps: its settings and the SDK
// plumbing shared with agentcore's providers.
type client struct {
	svc Service
	api *agentcore.OpenAIService
}

func newClient(s Service) client {
	return client{svc: s, api: agentcore.NewOpenAIService(agentcore.OpenAIOptions{
		BaseURL: s.BaseURL, APIKey: s.APIKey, HTTPClient: s.HTTPClient, Timeout: s.Timeout, Config: s.Config,
	})}
}

// errNotSetUp is the error of a client that was never configured.
var errNotSetUp = errors.New("this media service is not configured")

// ready returns why a call cannot be made: a client that is nil (its
// service is off) or a base URL that cannot be used.
func (c *client) ready(config string) error {
	if c == nil {
		return fmt.Errorf("%s: %w; set %s.model to turn it on", config, errNotSetUp, config)
	}
	if err := c.api.Usable(); err != nil {
		return fmt.Errorf("%s: %w", config, err)
	}
	return nil
}

// fail describes the failure err of a call doing what: which service,
// model and server, and, from agentcore, what to check.
func (c *client) fail(ctx context.Context, what string, err error) error {
	return fmt.Errorf("%s: %s with model %s at %s failed: %w", c.svc.Config, what, c.svc.Model, c.api.BaseURL(), c.api.Fail(ctx, err))
}

// garbage describes an answer that came back but is not what the API
// sends.
func (c *client) garbage(what, problem string) error {
	return fmt.Errorf("%s: %s with model %s at %s: the server's answer %s; check that %s.base_url points at an OpenAI-compatible /v1 API",
		c.svc.Config, what, c.svc.Model, c.api.BaseURL(), problem, c.svc.Config)
}
