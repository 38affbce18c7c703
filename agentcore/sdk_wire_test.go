package agentcore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/switchboard-chat/switchboard/tools"
)

// The providers map a Request onto the SDKs' request types; these tests
// hold that mapping to a second, plain construction with the same types:
// the same Request must serialise to the same JSON.

// wireRequest is a conversation that uses every mapping the providers make.
func wireRequest() Request {
	return Request{
		Model:     "m-1",
		System:    "be brief",
		MaxTokens: 77,
		Messages: []Message{
			{Role: RoleSystem, Content: "also: be kind"},
			{Role: RoleUser, Content: "look it up"},
			{Role: RoleAssistant, Content: "", ToolCalls: []ToolCall{
				{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)},
				{ID: "c2", Name: "broken", Arguments: json.RawMessage(`"{not json"`)},
				{ID: "c3", Name: "noargs"},
			}},
			{Role: RoleTool, ToolCallID: "c1", ToolName: "search", Content: "found it"},
			{Role: RoleTool, ToolCallID: "c2", ToolName: "broken", Content: "bad arguments", IsError: true},
			{Role: RoleTool, ToolCallID: "c3", ToolName: "noargs", Content: ""},
			{Role: RoleAssistant, Content: "here: <b>it</b> & \u2028 \"quoted\""},
			{Role: RoleUser, Content: ""},
			{Role: RoleUser, Content: "thanks ✓"},
		},
		Tools: []tools.Spec{
			{Name: "search", Description: "search the web", Parameters: json.RawMessage(
				`{"type":"object","properties":{"q":{"type":"string","description":"what"}},"required":["q"],"additionalProperties":false}`)},
			{Name: "noargs"},
			{Name: "nulled", Parameters: json.RawMessage(`null`)},
		},
	}
}

// sameJSON fails the test unless a and b serialise to equal JSON values.
func sameJSON(t *testing.T, what string, ours, sdk any) {
	t.Helper()
	decode := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: marshal: %v", what, err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: unmarshal %s: %v", what, b, err)
		}
		return out
	}
	o, s := decode(ours), decode(sdk)
	if !reflect.DeepEqual(o, s) {
		ob, _ := json.MarshalIndent(o, "", " ")
		sb, _ := json.MarshalIndent(s, "", " ")
		t.Fatalf("%s differs from the SDK's\nours:\n%s\nSDK:\n%s", what, ob, sb)
	}
}

func TestOpenAIWireMatchesSDK(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("max_completion_tokens=%v", own), func(t *testing.T) {
			p := NewOpenAI(OpenAIOptions{Model: "default"})
			p.maxCompletionTokens = own
			req := wireRequest()
			req.Messages = append(req.Messages,
				Message{Role: RoleUser, Content: "what is this?", Images: []Image{{Type: "image/png", Data: noisePNG(t, 4, 4)}}},
				Message{Role: RoleUser, Images: []Image{{Type: "image/png", Data: noisePNG(t, 3, 2)}}})
			body, err := p.body(req)
			if err != nil {
				t.Fatal(err)
			}
			var ours map[string]any
			if err := json.Unmarshal(body, &ours); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			sdk := openAISDKParams(t, req, own)
			var withStream map[string]any
			b, _ := json.Marshal(sdk)
			_ = json.Unmarshal(b, &withStream)
			withStream["stream"] = true // the SDK's NewStreaming adds it when sending
			sameJSON(t, "chat completions request", ours, withStream)
		})
	}
}

// openAISDKParams builds req with openai-go's types.
func openAISDKParams(t *testing.T, req Request, maxCompletion bool) openai.ChatCompletionNewParams {
	t.Helper()
	params := openai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	for _, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			if len(m.Images) == 0 {
				params.Messages = append(params.Messages, openai.UserMessage(m.Content))
				continue
			}
			var parts []openai.ChatCompletionContentPartUnionParam
			if m.Content != "" {
				parts = append(parts, openai.TextContentPart(m.Content))
			}
			for _, im := range m.Images {
				url := "data:" + im.Type + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
			}
			params.Messages = append(params.Messages, openai.UserMessage(parts))
		case RoleTool:
			params.Messages = append(params.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: c.Name, Arguments: argumentsText(c.Arguments),
						},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	for _, tool := range req.Tools {
		schema := openai.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(tool.Parameters) > 0 && string(tool.Parameters) != "null" {
			schema = nil
			if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
				t.Fatal(err)
			}
		}
		def := openai.FunctionDefinitionParam{Name: tool.Name, Parameters: schema}
		if tool.Description != "" {
			def.Description = openai.String(tool.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if maxCompletion {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	} else {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	return params
}

func TestAnthropicWireMatchesSDK(t *testing.T) {
	p := NewAnthropic(AnthropicOptions{Model: "default"})
	req := wireRequest()
	ours, err := p.params(req)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "messages request", ours, anthropicSDKParams(t, req))
}

// anthropicSDKParams builds req with anthropic-sdk-go's types.
func anthropicSDKParams(t *testing.T, req Request) anthropic.MessageNewParams {
	t.Helper()
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	params.System = append(params.System, anthropic.TextBlockParam{Text: req.System})
	for _, m := range req.Messages {
		var (
			assistant bool
			blocks    []anthropic.ContentBlockParamUnion
		)
		switch m.Role {
		case RoleSystem:
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			continue
		case RoleUser:
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
		case RoleTool:
			r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.IsError {
				r.IsError = anthropic.Bool(true)
			}
			if m.Content != "" {
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &r})
		case RoleAssistant:
			assistant = true
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, toolInput(c.Arguments), c.Name))
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(params.Messages); n > 0 && (params.Messages[n-1].OfAssistant != nil) == assistant {
			last := &params.Messages[n-1]
			if assistant {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
			} else {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
			}
			continue
		}
		if assistant {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for _, tool := range req.Tools {
		var s anthropic.ToolInputSchemaParam
		s.Properties = map[string]any{}
		if len(tool.Parameters) > 0 && string(tool.Parameters) != "null" {
			var m map[string]any
			if err := json.Unmarshal(tool.Parameters, &m); err != nil {
				t.Fatal(err)
			}
			for k, v := range m {
				switch k {
				case "type":
				case "properties":
					s.Properties = v
				case "required":
					for _, r := range v.([]any) {
						s.Required = append(s.Required, r.(string))
					}
				default:
					if s.ExtraFields == nil {
						s.ExtraFields = map[string]any{}
					}
					s.ExtraFields[k] = v
				}
			}
		}
		u := anthropic.ToolUnionParamOfTool(s, tool.Name)
		if tool.Description != "" {
			u.OfTool.Description = anthropic.String(tool.Description)
		}
		params.Tools = append(params.Tools, u)
	}
	// The cache breakpoints of wireRequest, set by hand: the last tool, the
	// last system block, the turn that ended the previous call (the tool
	// results, before the assistant's "here") and the newest turn.
	cache := anthropic.NewCacheControlEphemeralParam()
	params.Tools[len(params.Tools)-1].OfTool.CacheControl = cache
	params.System[len(params.System)-1].CacheControl = cache
	params.Messages[2].OfUser.Content[2].OfToolResult.CacheControl = cache
	params.Messages[4].OfUser.Content[0].OfText.CacheControl = cache
	return params
}
