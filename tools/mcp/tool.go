package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-chat/switchboard/tools"
)

// maxResult bounds what one call returns to the model.
const maxResult = 64 << 10

// permitFunc is Options.Permit.
type permitFunc func(ctx context.Context, call tools.Call, server, tool string) (why string, ok bool)

// bridged is what every tool of a server shares: its groups and its grant
// check, under the name the server's grants know it by.
type bridged struct {
	srv    *server
	remote string // the server's own name; "resources" for the resources tool
	permit permitFunc
}

// Groups implements tools.Grouped.
func (b bridged) Groups() []string { return []string{"mcp", "mcp:" + b.srv.cfg.Name} }

// Server returns the name of the MCP server the tool belongs to.
func (b bridged) Server() string { return b.srv.cfg.Name }

// Remote returns the tool's name on its server.
func (b bridged) Remote() string { return b.remote }

// Permit implements tools.Permitted (grants).
func (b bridged) Permit(ctx context.Context, call tools.Call) (string, bool) {
	if b.permit == nil {
		return "", true
	}
	return b.permit(ctx, call, b.srv.cfg.Name, b.remote)
}

// down is the error of a call made while the server is away.
func (b bridged) down() tools.Result {
	return tools.ErrorResult(fmt.Sprintf("MCP server %s is down right now; try again in a minute", b.srv.cfg.Name))
}

// tool is one bridged MCP tool.
type tool struct {
	bridged
	name   string // mcp_<server>_<tool>
	desc   string
	params json.RawMessage
	class  tools.SideEffect
}

// unsafeName matches the characters of a tool name that model APIs refuse.
var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// ToolName is the registry name of a server's tool: mcp_<server>_<tool>,
// with characters model APIs refuse replaced by _, at most 64 long.
func ToolName(server, remote string) string {
	n := "mcp_" + server + "_" + unsafeName.ReplaceAllString(remote, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

func newTool(srv *server, t *sdk.Tool, permit permitFunc) *tool {
	params, err := json.Marshal(t.InputSchema)
	if err != nil || string(params) == "null" || !strings.HasPrefix(string(params), "{") {
		params = json.RawMessage(`{"type":"object"}`)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	desc = fmt.Sprintf("[MCP server %s] %s", srv.cfg.Name, desc)
	return &tool{bridged: bridged{srv: srv, remote: t.Name, permit: permit},
		name: ToolName(srv.cfg.Name, t.Name), desc: desc, params: params, class: ClassOf(t.Annotations)}
}

// ClassOf maps a tool's annotations to a side-effect class: read-only
// tools are read_only, or network when they reach an open world (the
// default); everything else — unannotated tools included — is mutating,
// so it is asked about by default.
func ClassOf(a *sdk.ToolAnnotations) tools.SideEffect {
	if a == nil || !a.ReadOnlyHint {
		return tools.SideEffectMutating
	}
	if a.OpenWorldHint == nil || *a.OpenWorldHint {
		return tools.SideEffectNetwork
	}
	return tools.SideEffectReadOnly
}

// Name implements tools.Tool.
func (t *tool) Name() string { return t.name }

// Description implements tools.Tool.
func (t *tool) Description() string { return t.desc }

// Parameters implements tools.Tool.
func (t *tool) Parameters() json.RawMessage { return t.params }

// SideEffect implements tools.Tool.
func (t *tool) SideEffect() tools.SideEffect { return t.class }

// Execute implements tools.Tool: one tools/call on the live session. The
// grant is checked again here, so a call that reaches the tool without the
// gate cannot use it either.
func (t *tool) Execute(ctx context.Context, args json.RawMessage) tools.Result {
	call, _ := tools.CallFrom(ctx)
	if why, ok := t.Permit(ctx, call); !ok {
		return tools.ErrorResult(why)
	}
	cs := t.srv.current()
	if cs == nil {
		return t.down()
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("MCP server %s: %v", t.srv.cfg.Name, err))
	}
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", c.URI)
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				b.WriteString(c.Resource.Text)
			}
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	out := strings.TrimSpace(b.String())
	if len(out) > maxResult {
		out = out[:maxResult] + "\n… (cut: the result was longer than 64 KB)"
	}
	if res.IsError {
		return tools.ErrorResult(out)
	}
	return tools.Result{ForLLM: out}
}
