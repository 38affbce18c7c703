package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/web"
)

func TestWebSearchProviders(t *testing.T) {
	var gotKey, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		gotQuery = r.URL.Query().Get("q")
		switch r.URL.Path {
		case "/html/":
			fmt.Fprint(rw, `<html><body>
<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2Fdoc%2F&amp;rut=x">The <b>Go</b> docs</a>
<a class="result__snippet" href="#">Documentation for the Go language.</a></div>
<div class="result"><a class="result__a" href="https://pkg.go.dev/">Packages</a></div></body></html>`)
		case "/res/v1/web/search":
			gotKey = r.Header.Get("X-Subscription-Token")
			fmt.Fprint(rw, `{"web":{"results":[{"title":"Brave hit","url":"https://example.com/b","description":"with <strong>bold</strong> words"}]}}`)
		case "/search":
			if r.URL.Query().Get("format") != "json" {
				http.Error(rw, "format", 400)
				return
			}
			fmt.Fprint(rw, `{"results":[{"title":"Searx hit","url":"https://example.com/s","content":"from searx"}]}`)
		case "/broken/search":
			http.Error(rw, "down", 503)
		}
	}))
	defer srv.Close()
	run := func(o web.SearchOptions, args string) tools.Result {
		return web.NewSearch(o).Execute(context.Background(), json.RawMessage(args))
	}
	ddg := run(web.SearchOptions{URL: srv.URL}, `{"query":"golang docs"}`)
	for _, want := range []string{"1. The Go docs\n   https://go.dev/doc/\n   Documentation for the Go language.", "2. Packages\n   https://pkg.go.dev/"} {
		if ddg.IsError || !strings.Contains(ddg.ForLLM, want) {
			t.Errorf("duckduckgo result lacks %q:\n%s", want, ddg.ForLLM)
		}
	}
	if gotQuery != "golang docs" {
		t.Errorf("query sent = %q", gotQuery)
	}
	if r := run(web.SearchOptions{URL: srv.URL}, `{"query":"golang docs","count":1}`); strings.Contains(r.ForLLM, "Packages") {
		t.Errorf("count 1 returned more: %s", r.ForLLM)
	}
	brave := run(web.SearchOptions{Provider: "brave", URL: srv.URL, APIKey: "k-123"}, `{"query":"x"}`)
	if brave.IsError || !strings.Contains(brave.ForLLM, "1. Brave hit\n   https://example.com/b\n   with bold words") || gotKey != "k-123" {
		t.Errorf("brave: %+v (key %q)", brave, gotKey)
	}
	searx := run(web.SearchOptions{Provider: "searxng", URL: srv.URL}, `{"query":"x"}`)
	if searx.IsError || !strings.Contains(searx.ForLLM, "1. Searx hit\n   https://example.com/s\n   from searx") {
		t.Errorf("searxng: %+v", searx)
	}
	broken := run(web.SearchOptions{Provider: "searxng", URL: srv.URL + "/broken"}, `{"query":"x"}`)
	if !broken.IsError || !strings.Contains(broken.ForLLM, "HTTP 503") {
		t.Errorf("a failing provider: %+v", broken)
	}
	if r := run(web.SearchOptions{URL: srv.URL}, `{}`); !r.IsError {
		t.Errorf("missing query: %+v", r)
	}
}
