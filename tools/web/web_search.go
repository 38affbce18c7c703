package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/switchboard-chat/switchboard/tools"
)

// The web_search providers.
const (
	SearchDuckDuckGo = "duckduckgo"
	SearchBrave      = "brave"
	SearchSearXNG    = "searxng"
)

// web_search limits.
const (
	defaultSearchCount = 5
	maxSearchCount     = 10
	maxSearchBody      = 2 << 20
)

// SearchOptions configures web_search.
type SearchOptions struct {
	// Provider is duckduckgo (default), brave or searxng.
	Provider string
	// URL overrides the provider's endpoint (the SearXNG server's base
	// URL; tests).
	URL string
	// APIKey authenticates to Brave.
	APIKey string
	// Timeout bounds one search (default 15 s).
	Timeout time.Duration
}

// WebSearch is the web_search tool.
type WebSearch struct {
	opts   SearchOptions
	client *http.Client
}

// NewSearch returns web_search for the configured provider. The
// endpoint is the admin's choice, so it is not behind the SSRF guard (a
// SearXNG server is often on the local network).
func NewSearch(o SearchOptions) *WebSearch {
	if o.Provider == "" {
		o.Provider = SearchDuckDuckGo
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	return &WebSearch{opts: o, client: &http.Client{Timeout: o.Timeout}}
}

// Name implements Tool.
func (*WebSearch) Name() string { return "web_search" }

// Description implements Tool.
func (*WebSearch) Description() string {
	return "Search the web. Returns titles, URLs and snippets; use web_fetch to read a result."
}

// Parameters implements Tool.
func (*WebSearch) Parameters() json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string"},`+
		`"count":{"type":"integer","minimum":1,"maximum":%d}},"required":["query"],"additionalProperties":false}`, maxSearchCount))
}

// SideEffect implements Tool.
func (*WebSearch) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// searchResult is one hit.
type searchResult struct{ Title, URL, Snippet string }

// Execute implements Tool.
func (t *WebSearch) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Query string `json:"query"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return tools.ErrorResult(`pass {"query": "...", "count"?: N}`)
	}
	if a.Count <= 0 {
		a.Count = defaultSearchCount
	}
	a.Count = min(a.Count, maxSearchCount)
	var (
		results []searchResult
		err     error
	)
	switch t.opts.Provider {
	case SearchBrave:
		results, err = t.brave(ctx, a.Query, a.Count)
	case SearchSearXNG:
		results, err = t.searxng(ctx, a.Query)
	default:
		results, err = t.duckduckgo(ctx, a.Query)
	}
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("web search (%s) failed: %v; try again later or ask an admin to check tools.web.search", t.opts.Provider, err))
	}
	if len(results) == 0 {
		return tools.Result{ForLLM: "no results for " + a.Query}
	}
	var b strings.Builder
	for i, r := range results[:min(len(results), a.Count)] {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, strings.TrimSpace(r.Title), r.URL)
		if s := strings.TrimSpace(r.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return tools.Result{ForLLM: b.String()}
}

// get fetches endpoint and returns the body, refusing error statuses.
func (t *WebSearch) get(ctx context.Context, endpoint string, header map[string]string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "switchboard-web-search/1")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return body, nil
}

func (t *WebSearch) endpoint(def string) string {
	if t.opts.URL != "" {
		return strings.TrimRight(t.opts.URL, "/")
	}
	return def
}

func (t *WebSearch) brave(ctx context.Context, q string, count int) ([]searchResult, error) {
	u := t.endpoint("https://api.search.brave.com") + "/res/v1/web/search?" + url.Values{"q": {q}, "count": {fmt.Sprint(count)}}.Encode()
	body, err := t.get(ctx, u, map[string]string{"X-Subscription-Token": t.opts.APIKey, "Accept": "application/json"})
	if err != nil {
		return nil, err
	}
	var r struct {
		Web struct {
			Results []struct{ Title, URL, Description string }
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("unreadable answer: %w", err)
	}
	var out []searchResult
	for _, x := range r.Web.Results {
		out = append(out, searchResult{Title: x.Title, URL: x.URL, Snippet: stripTags(x.Description)})
	}
	return out, nil
}

func (t *WebSearch) searxng(ctx context.Context, q string) ([]searchResult, error) {
	u := t.endpoint("") + "/search?" + url.Values{"q": {q}, "format": {"json"}}.Encode()
	body, err := t.get(ctx, u, map[string]string{"Accept": "application/json"})
	if err != nil {
		return nil, err
	}
	var r struct {
		Results []struct{ Title, URL, Content string }
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("unreadable answer (is format=json enabled on the SearXNG server?): %w", err)
	}
	var out []searchResult
	for _, x := range r.Results {
		out = append(out, searchResult{Title: x.Title, URL: x.URL, Snippet: x.Content})
	}
	return out, nil
}

// duckduckgo reads DuckDuckGo's HTML results page.
func (t *WebSearch) duckduckgo(ctx context.Context, q string) ([]searchResult, error) {
	u := t.endpoint("https://html.duckduckgo.com") + "/html/?" + url.Values{"q": {q}}.Encode()
	body, err := t.get(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("unreadable answer: %w", err)
	}
	var out []searchResult
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			switch {
			case hasClass(n, "result__a"):
				out = append(out, searchResult{Title: textOf(n), URL: ddgTarget(attr(n, "href"))})
			case hasClass(n, "result__snippet") && len(out) > 0:
				out[len(out)-1].Snippet = textOf(n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

// ddgTarget unwraps DuckDuckGo's redirect links (//duckduckgo.com/l/?uddg=…).
func ddgTarget(href string) string {
	u, err := url.Parse(href)
	if err != nil {
		return href
	}
	if target := u.Query().Get("uddg"); target != "" {
		return target
	}
	if u.Scheme == "" {
		u.Scheme = "https"
	}
	return u.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// stripTags removes the <strong> highlighting Brave puts in snippets.
func stripTags(s string) string {
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return s
	}
	return textOf(doc)
}
