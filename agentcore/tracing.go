package agentcore

import (
	"cmp"
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-chat/switchboard/tools"
)

// chat calls the provider inside an "llm.chat" span when the agent traces.
func (a *Agent) chat(ctx context.Context, req Request, onText func(string)) (Response, error) {
	if a.Tracer == nil {
		resp, err := a.Provider.Chat(ctx, req, onText)
		return resp, withModel(err, req.Model)
	}
	ctx, span := a.Tracer.Start(ctx, "llm.chat", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", req.Model),
		attribute.Int("gen_ai.request.messages", len(req.Messages)),
		attribute.Int("gen_ai.request.tools", len(req.Tools))))
	defer span.End()
	resp, err := a.Provider.Chat(ctx, req, onText)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return resp, withModel(err, req.Model)
	}
	// The GenAI conventions count cached input within input_tokens, where
	// Usage counts it apart.
	u := resp.Usage
	span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens),
		attribute.Int("gen_ai.usage.cache_read.input_tokens", u.CacheReadTokens),
		attribute.Int("gen_ai.usage.cache_creation.input_tokens", u.CacheWriteTokens),
		attribute.Int("gen_ai.usage.output_tokens", u.OutputTokens),
		attribute.Int("gen_ai.response.tool_calls", len(resp.ToolCalls)),
		attribute.String("gen_ai.response.model", cmp.Or(resp.Model, req.Model)))
	return resp, nil
}

// executeTraced runs one tool call inside a "tool.call" span when the agent
// traces. The arguments are not recorded: they may hold what a person
// typed, and secrets.
func (a *Agent) executeTraced(ctx context.Context, in RunInput, call tools.Call, c ToolCall) tools.Result {
	if a.Tracer == nil {
		return a.execute(ctx, in, call, c)
	}
	ctx, span := a.Tracer.Start(ctx, "tool.call", trace.WithAttributes(
		attribute.String("gen_ai.tool.name", c.Name), attribute.String("gen_ai.tool.call.id", c.ID)))
	defer span.End()
	res := a.execute(ctx, in, call, c)
	span.SetAttributes(attribute.Bool("switchboard.tool.waiting", res.Waiting != nil))
	if res.IsError {
		span.SetStatus(codes.Error, "tool returned an error")
	}
	return res
}
