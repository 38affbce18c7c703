package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-chat/switchboard/tools"
)

// ResourcesTool is the remote name of a server's resources tool: it is
// registered as ToolName(server, ResourcesTool), and tools.allow/deny and
// grants name it so.
const ResourcesTool = "resources"

// Bounds of one call of the resources tool.
const (
	maxListed    = 50   // resources one list call shows
	maxListPages = 20   // server pages one list call fetches
	maxURI       = 4096 // bytes of a URI the tool sends or shows
	maxName      = 200  // bytes of a name or MIME type shown
	maxDesc      = 300  // bytes of a description shown
)

// resourcesUsage is what a call with bad arguments is told.
const resourcesUsage = `pass {"action": "list"} (and "cursor" from the last list for more) to see the resources, ` +
	`or {"action": "read", "uri": "..."} with a URI from the list to read one`

// resourcesParams is the resources tool's JSON schema.
var resourcesParams = json.RawMessage(`{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["list","read"],"description":"list the resources, or read one"},` +
	`"uri":{"type":"string","description":"read: the resource's URI, as list shows it"},` +
	`"cursor":{"type":"string","description":"list: the cursor the last list gave, for the resources after it"}},` +
	`"required":["action"]}`)

// resourcesTool lists and reads the resources of one server. It only
// reads, so it is read_only; the server's grants apply to it as to its
// tools.
type resourcesTool struct {
	bridged
	name    string
	timeout time.Duration
}

func newResourcesTool(srv *server, permit permitFunc, timeout time.Duration) *resourcesTool {
	return &resourcesTool{bridged: bridged{srv: srv, remote: ResourcesTool, permit: permit},
		name: ToolName(srv.cfg.Name, ResourcesTool), timeout: timeout}
}

// hasResources says whether the session's server advertised resources.
func hasResources(cs *sdk.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources != nil
}

// Name implements tools.Tool.
func (t *resourcesTool) Name() string { return t.name }

// Description implements tools.Tool.
func (t *resourcesTool) Description() string {
	return fmt.Sprintf("[MCP server %s] The server's resources (documents, files, records it offers to read): "+
		`{"action": "list"} names them (URI, name, type, description; %d at a time, "cursor" for more), `+
		`{"action": "read", "uri": "..."} returns one's text (at most 64 KB; binary contents are named, not shown).`,
		t.srv.cfg.Name, maxListed)
}

// Parameters implements tools.Tool.
func (t *resourcesTool) Parameters() json.RawMessage { return resourcesParams }

// SideEffect implements tools.Tool.
func (t *resourcesTool) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool. As for the server's tools, the grant is
// checked again here.
func (t *resourcesTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	call, _ := tools.CallFrom(ctx)
	if why, ok := t.Permit(ctx, call); !ok {
		return tools.ErrorResult(why)
	}
	var a struct {
		Action string `json:"action"`
		URI    string `json:"uri"`
		Cursor string `json:"cursor"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return tools.ErrorResult("invalid arguments: " + resourcesUsage)
	}
	action := strings.TrimSpace(a.Action)
	if action != "list" && action != "read" {
		return tools.ErrorResult(fmt.Sprintf("unknown action %q: %s", clip(action, maxName), resourcesUsage))
	}
	cs := t.srv.current()
	if cs == nil {
		return t.down()
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	if action == "list" {
		return t.list(ctx, cs, strings.TrimSpace(a.Cursor))
	}
	return t.read(ctx, cs, strings.TrimSpace(a.URI))
}

// read returns the text of the resource at uri, cut at maxResult.
func (t *resourcesTool) read(ctx context.Context, cs *sdk.ClientSession, uri string) tools.Result {
	name := t.srv.cfg.Name
	switch {
	case uri == "":
		return tools.ErrorResult(`read needs a "uri": ` + resourcesUsage)
	case len(uri) > maxURI:
		return tools.ErrorResult(fmt.Sprintf("the uri is %d bytes; at most %d are taken. Use a URI exactly as list shows it", len(uri), maxURI))
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		if notFound(err) {
			return tools.ErrorResult(fmt.Sprintf(`MCP server %s has no resource %q (%v); {"action": "list"} shows the URIs it has`, name, clip(uri, maxName), err))
		}
		return tools.ErrorResult(fmt.Sprintf(`MCP server %s could not read %q: %v; check the URI with {"action": "list"}, or try again in a minute`,
			name, clip(uri, maxName), err))
	}
	var b strings.Builder
	text := 0 // bytes of text the server sent
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		text += len(c.Text)
		if b.Len() > maxResult {
			continue // cut below; only counted
		}
		head := fmt.Sprintf("[resource %s, %s", clip(orElse(c.URI, uri), maxURI), clip(orElse(c.MIMEType, "type unknown"), maxName))
		if len(c.Blob) > 0 {
			fmt.Fprintf(&b, "%s, %s of binary contents, not shown]\n", head, humanSize(int64(len(c.Blob))))
			continue
		}
		fmt.Fprintf(&b, "%s]\n%s\n", head, c.Text)
	}
	if b.Len() == 0 {
		return tools.Result{ForLLM: fmt.Sprintf("resource %s of MCP server %s is empty", clip(uri, maxURI), name)}
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if len(out) > maxResult {
		out = cutUTF8(out, maxResult) + fmt.Sprintf("\n… (cut: the resource is longer than 64 KB, %d bytes of text; only the first 64 KB are shown. "+
			"MCP reads a resource whole: if the server has a tool that reads a part, use that)", text)
	}
	return tools.Result{ForLLM: out}
}

// notFound says whether err is the server saying it has no such resource
// (the code of the current specification, or the older -32002).
func notFound(err error) bool {
	var w *jsonrpc.Error
	return errors.As(err, &w) && (w.Code == sdk.CodeResourceNotFound || w.Code == -32002)
}

// orElse is s, or def when s is empty.
func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// clip cuts s to at most n bytes (on a character boundary), saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "…(cut)"
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// humanSize is n bytes for people: 512 bytes, 2.0 KB, 1.5 MB.
func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}
