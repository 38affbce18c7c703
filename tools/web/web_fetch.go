package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"

	"github.com/switchboard-chat/switchboard/tools"
)

// web_fetch defaults and limits.
const (
	DefaultFetchMaxBytes = 2_000_000
	DefaultFetchTimeout  = 20 * time.Second
	maxFetchRedirects    = 5
	maxFetchShown        = 100_000 // characters of Markdown returned
)

// FetchOptions configures web_fetch.
type FetchOptions struct {
	// MaxBytes caps the body read (default 2 MB); Timeout the whole fetch
	// (default 20 s).
	MaxBytes int64
	Timeout  time.Duration
	// AllowPrivate lets fetches reach loopback, private and link-local
	// addresses (tools.web.fetch.allow_private); off by default.
	AllowPrivate bool
	// Resolve and Dial replace the system resolver and dialer (tests);
	// the SSRF guard applies to what they return either way.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// WebFetch is the web_fetch tool: a web page as readable Markdown.
type WebFetch struct {
	opts   FetchOptions
	client *http.Client
}

// NewFetch returns web_fetch with its SSRF-guarded HTTP client.
func NewFetch(o FetchOptions) *WebFetch {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultFetchMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultFetchTimeout
	}
	if o.Resolve == nil {
		o.Resolve = systemResolve
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	g := guardedDialer{allowPrivate: o.AllowPrivate, resolve: o.Resolve, dial: o.Dial}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, past the guard
		DialContext:           g.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
	}
	client := &http.Client{
		Transport: transport,
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxFetchRedirects {
				return fmt.Errorf("more than %d redirects", maxFetchRedirects)
			}
			return checkURL(req.URL, o.AllowPrivate)
		},
	}
	return &WebFetch{opts: o, client: client}
}

// Name implements Tool.
func (*WebFetch) Name() string { return "web_fetch" }

// Description implements Tool.
func (*WebFetch) Description() string {
	return "Fetch a web page (http/https) and return its text as Markdown. Internal and private addresses are refused."
}

// Parameters implements Tool.
func (*WebFetch) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"http(s) URL"}},` +
		`"required":["url"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*WebFetch) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// ApprovalKey implements ApprovalKeyed: "Always allow" covers one host.
func (*WebFetch) ApprovalKey(args json.RawMessage) string {
	var a struct{ URL string }
	_ = json.Unmarshal(args, &a)
	if u, err := url.Parse(strings.TrimSpace(a.URL)); err == nil {
		return strings.ToLower(u.Hostname())
	}
	return ""
}

// Execute implements Tool.
func (t *WebFetch) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.URL) == "" {
		return tools.ErrorResult(`pass {"url": "https://…"}`)
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("%q is not a valid URL", a.URL))
	}
	if err := checkURL(u, t.opts.AllowPrivate); err != nil {
		return tools.ErrorResult("refused: " + err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("%q is not a valid URL", a.URL))
	}
	req.Header.Set("User-Agent", "switchboard-web-fetch/1")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.1")
	resp, err := t.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrBlockedAddress) {
			return tools.ErrorResult("refused: " + unwrapURLError(err).Error())
		}
		return tools.ErrorResult(fmt.Sprintf("could not fetch %s: %v", u.Redacted(), unwrapURLError(err)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.MaxBytes+1))
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("reading %s: %v", u.Redacted(), err))
	}
	truncated := int64(len(body)) > t.opts.MaxBytes
	if truncated {
		body = body[:t.opts.MaxBytes]
	}
	final := resp.Request.URL.Redacted()
	if resp.StatusCode >= 400 {
		return tools.ErrorResult(fmt.Sprintf("%s answered HTTP %d", final, resp.StatusCode))
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text, title string
	switch {
	case ctype == "text/html" || ctype == "application/xhtml+xml" || (ctype == "" && looksLikeHTML(body)):
		title = htmlTitle(string(body))
		md, err := htmltomarkdown.ConvertString(string(body), converter.WithDomain(resp.Request.URL.String()))
		if err != nil {
			return tools.ErrorResult(fmt.Sprintf("could not read the page %s: %v", final, err))
		}
		text = md
	case strings.HasPrefix(ctype, "text/") || ctype == "application/json" || strings.HasSuffix(ctype, "+json") ||
		ctype == "application/xml" || strings.HasSuffix(ctype, "+xml") || ctype == "":
		if !utf8.Valid(body) {
			return tools.ErrorResult(fmt.Sprintf("%s is not UTF-8 text", final))
		}
		text = string(body)
	default:
		return tools.ErrorResult(fmt.Sprintf("%s is %s, not a page or text; web_fetch reads text only", final, ctype))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", final)
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", title)
	}
	b.WriteString("\n")
	if len(text) > maxFetchShown {
		cut := maxFetchShown
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text, truncated = text[:cut], true
	}
	b.WriteString(strings.TrimSpace(text))
	if truncated {
		b.WriteString("\n\n[truncated]")
	}
	return tools.Result{ForLLM: b.String()}
}

// unwrapURLError drops net/http's "Get \"URL\":" wrapping.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func looksLikeHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html")
}

// htmlTitle returns the page's <title>, or "".
func htmlTitle(page string) string {
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "title" {
				if z.Next() == html.TextToken {
					return strings.TrimSpace(string(z.Text()))
				}
				return ""
			}
		}
	}
}
