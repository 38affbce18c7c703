package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-chat/switchboard/tools"
)

// listPos is where a list call starts: a page of the server (its cursor;
// empty for the first) and how many of that page's resources were shown
// already. The model gets it as an opaque cursor, so a server whose pages
// hold more than one call shows loses none of them.
type listPos struct {
	Cursor string `json:"c,omitempty"`
	Skip   int    `json:"s,omitempty"`
}

func (p listPos) encode() string {
	raw, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func decodePos(s string) (listPos, error) {
	var p listPos
	if s == "" {
		return p, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	if err != nil || p.Skip < 0 {
		return listPos{}, fmt.Errorf("not a cursor this tool gave")
	}
	return p, nil
}

// list shows up to maxListed resources from the cursor on, fetching the
// server's pages as needed, and a cursor for the rest when there is more.
func (t *resourcesTool) list(ctx context.Context, cs *sdk.ClientSession, cursor string) tools.Result {
	name := t.srv.cfg.Name
	if len(cursor) > 2*maxURI {
		return tools.ErrorResult(`the cursor is too long: pass the cursor the last list gave exactly, or list again without one`)
	}
	pos, err := decodePos(cursor)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf(`invalid cursor (%v): pass the cursor the last list gave exactly, or list again without one`, err))
	}
	var lines []string
	size := 0
	more := false
	for page := 0; ; page++ {
		if page == maxListPages {
			more = true // pos is the next page
			break
		}
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: pos.Cursor})
		if err != nil {
			return tools.ErrorResult(fmt.Sprintf("MCP server %s could not list its resources: %v; try again in a minute, "+
				"or list again without a cursor", name, err))
		}
		page := res.Resources[min(pos.Skip, len(res.Resources)):]
		for i, r := range page {
			line := resourceLine(r)
			if len(lines) == maxListed || size+len(line) > maxResult-1024 {
				pos.Skip += i
				more = true
				break
			}
			lines = append(lines, line)
			size += len(line) + 1
		}
		if more || res.NextCursor == "" {
			break
		}
		pos = listPos{Cursor: res.NextCursor}
	}
	var b strings.Builder
	switch {
	case len(lines) == 0 && !more:
		fmt.Fprintf(&b, "MCP server %s lists no resources.", name)
	case len(lines) == 0:
		fmt.Fprintf(&b, "MCP server %s listed no resources in this part.", name)
	default:
		fmt.Fprintf(&b, "%d resources of MCP server %s (uri — name (type, size): description):\n%s",
			len(lines), name, strings.Join(lines, "\n"))
	}
	if more {
		fmt.Fprintf(&b, "\nThere are more: pass {\"action\": \"list\", \"cursor\": %q} for the next ones.", pos.encode())
	} else if len(lines) > 0 {
		b.WriteString("\nThat is all of them. Read one with {\"action\": \"read\", \"uri\": \"...\"}.")
	}
	return tools.Result{ForLLM: b.String()}
}

// resourceLine is one resource for the model, each field bounded.
func resourceLine(r *sdk.Resource) string {
	if r == nil {
		return "- (an empty entry)"
	}
	label := orElse(r.Title, r.Name)
	var about []string
	if r.MIMEType != "" {
		about = append(about, clip(r.MIMEType, maxName))
	}
	if r.Size > 0 {
		about = append(about, humanSize(r.Size))
	}
	uri := clip(r.URI, maxURI)
	if strings.ContainsAny(uri, " \t\r\n") {
		uri = strconv.Quote(uri) // quoted, so the model sees where it ends
	}
	line := "- " + uri
	if label != "" {
		line += " — " + clip(oneLine(label), maxName)
	}
	if len(about) > 0 {
		line += " (" + strings.Join(about, ", ") + ")"
	}
	if d := strings.TrimSpace(r.Description); d != "" {
		line += ": " + clip(oneLine(d), maxDesc)
	}
	return line
}

// oneLine folds s onto one line, so a name or description cannot pose as
// further entries of the list.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
