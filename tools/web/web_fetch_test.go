package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/web"
)

// publicIP stands for a public web server; the test dialer connects it to
// a local httptest server.
const publicIP = "93.184.216.34"

// fetchWorld is web_fetch with a fake DNS and a dialer that sends the fake
// public address to a local server, and records every address dialed.
type fetchWorld struct {
	fetch  *web.WebFetch
	srv    *httptest.Server
	dialed []string
	dials  atomic.Int64
}

func newFetchWorld(t *testing.T, h http.Handler, dns map[string][]string) *fetchWorld {
	t.Helper()
	w := &fetchWorld{srv: httptest.NewServer(h)}
	t.Cleanup(w.srv.Close)
	local := w.srv.Listener.Addr().String()
	lookups := map[string]int{}
	w.fetch = web.NewFetch(web.FetchOptions{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			answers, ok := dns[host]
			if !ok {
				return nil, fmt.Errorf("no such host %s", host)
			}
			// A rebinding server answers differently each time.
			lookups[host]++
			a := answers[min(lookups[host]-1, len(answers)-1)]
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			w.dials.Add(1)
			w.dialed = append(w.dialed, addr)
			host, _, _ := net.SplitHostPort(addr)
			if host != publicIP {
				return nil, errors.New("test dialer: only the fake public address is reachable")
			}
			return (&net.Dialer{}).DialContext(ctx, network, local)
		},
	})
	return w
}

func (w *fetchWorld) get(url string) tools.Result {
	raw, _ := json.Marshal(map[string]string{"url": url})
	return w.fetch.Execute(context.Background(), raw)
}

// TestWebFetchSSRFCorpus: none of these URLs reaches a private, loopback,
// link-local, metadata, CGNAT or reserved address (the dialer is never
// asked to connect to one).
func TestWebFetchSSRFCorpus(t *testing.T) {
	w := newFetchWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(rw, r, "http://127.0.0.1:22/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(rw, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
		case "/to-rebind":
			http.Redirect(rw, r, "http://rebind.test/", http.StatusFound)
		case "/to-localname":
			http.Redirect(rw, r, "http://localhost:8080/admin", http.StatusFound)
		case "/to-decimal":
			http.Redirect(rw, r, "http://2130706433/", http.StatusFound)
		case "/to-file":
			http.Redirect(rw, r, "file:///etc/passwd", http.StatusFound)
		case "/to-mapped":
			http.Redirect(rw, r, "http://[::ffff:10.0.0.1]/", http.StatusFound)
		default:
			fmt.Fprint(rw, "public page")
		}
	}), map[string][]string{
		"public.test":   {publicIP},
		"loopback.test": {"127.0.0.1"},
		"private.test":  {"10.1.2.3"},
		"meta.test":     {"169.254.169.254"},
		"v6local.test":  {"::1"},
		"mapped.test":   {"::ffff:192.168.1.1"},
		"cgnat.test":    {"100.64.0.1"},
		"rebind.test":   {publicIP, "127.0.0.1"}, // public first, loopback after
		"rebind2.test":  {"127.0.0.1", publicIP},
	})
	urls := []string{
		"http://127.0.0.1/", "http://127.0.0.1:8080/x", "http://127.1/", "http://127.0.1/", "http://0/", "http://0.0.0.0/",
		"http://2130706433/", "http://017700000001/", "http://0x7f000001/", "http://0x7f.0x0.0x0.0x1/", "http://0177.0.0.1/",
		"http://0177.1/", "http://localhost/", "http://LOCALHOST:8080/", "http://localhost./", "http://foo.localhost/",
		"http://[::1]/", "http://[0:0:0:0:0:0:0:1]/", "http://[::]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
		"http://[::ffff:10.0.0.1]/", "http://[64:ff9b::127.0.0.1]/", "http://[64:ff9b::a00:1]/", "http://[2002:7f00:1::]/",
		"http://[2002:c0a8:101::]/", "http://[::127.0.0.1]/", "http://[fe80::1]/", "http://[fe80::1%25eth0]/", "http://[fc00::1]/",
		"http://[fd00:ec2::254]/", "http://[ff02::1]/", "http://10.0.0.1/", "http://10.255.255.255/", "http://172.16.0.1/",
		"http://172.31.255.255/", "http://192.168.0.1/", "http://192.168.1.1:443/", "http://169.254.169.254/latest/meta-data/",
		"http://169.254.170.2/v2/credentials", "http://100.64.0.1/", "http://100.127.255.255/", "http://198.18.0.1/",
		"http://224.0.0.1/", "http://255.255.255.255/", "http://240.0.0.1/", "http://192.0.0.170/", "http://metadata.google.internal/",
		"http://loopback.test/", "http://private.test/", "http://meta.test/", "http://v6local.test/", "http://mapped.test/",
		"http://cgnat.test/", "http://rebind2.test/", "http://public.test/to-loopback", "http://public.test/to-metadata",
		"http://public.test/to-localname", "http://public.test/to-decimal", "http://public.test/to-mapped",
		"http://public.test/to-file", "http://user:pw@public.test/", "file:///etc/passwd", "gopher://127.0.0.1/",
		"ftp://10.0.0.1/", "http:///nohost", "http://[::1]:80/", "https://127.0.0.1:443/",
	}
	if len(urls) < 60 {
		t.Fatalf("corpus has %d URLs, want at least 60", len(urls))
	}
	for _, u := range urls {
		r := w.get(u)
		if !r.IsError || strings.Contains(r.ForLLM, "public page") && !strings.HasPrefix(u, "http://public.test/to-") {
			t.Errorf("%s: %+v, want refused", u, r)
		}
	}
	// The rebinding name answers public first: the guard connects to
	// exactly the address it checked, never to the loopback address the
	// name turns into later (checked below: every dial went to publicIP).
	if r := w.get("http://public.test/to-rebind"); r.IsError || !strings.Contains(r.ForLLM, "public page") {
		t.Errorf("redirect to a rebinding name: %+v", r)
	}
	for _, addr := range w.dialed {
		host, _, _ := net.SplitHostPort(addr)
		if host != publicIP {
			t.Errorf("the dialer was asked to connect to %s", addr)
		}
	}
}

func TestWebFetchReadsPagesAsMarkdown(t *testing.T) {
	big := strings.Repeat("word ", 1_000_000)
	w := newFetchWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, `<html><head><title>Release notes</title><script>alert(1)</script></head>
<body><h1>Version 2</h1><p>Now with <b>buttons</b> and <a href="/docs">docs</a>.</p><ul><li>fast</li><li>safe</li></ul></body></html>`)
		case "/moved":
			http.Redirect(rw, r, "/page", http.StatusFound)
		case "/data.json":
			rw.Header().Set("Content-Type", "application/json")
			fmt.Fprint(rw, `{"ok":true}`)
		case "/image.png":
			rw.Header().Set("Content-Type", "image/png")
			rw.Write([]byte("\x89PNG\r\n"))
		case "/big":
			rw.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(rw, big)
		case "/missing":
			http.NotFound(rw, r)
		}
	}), map[string][]string{"public.test": {publicIP}})

	r := w.get("http://public.test/moved")
	for _, want := range []string{"URL: http://public.test/page", "Title: Release notes", "# Version 2", "**buttons**",
		"[docs](http://public.test/docs)", "- fast"} {
		if r.IsError || !strings.Contains(r.ForLLM, want) {
			t.Errorf("page lacks %q:\n%s", want, r.ForLLM)
		}
	}
	if strings.Contains(r.ForLLM, "alert(1)") {
		t.Errorf("script text reached the model:\n%s", r.ForLLM)
	}
	if r := w.get("http://public.test/data.json"); r.IsError || !strings.Contains(r.ForLLM, `{"ok":true}`) {
		t.Errorf("json: %+v", r)
	}
	if r := w.get("http://public.test/image.png"); !r.IsError || !strings.Contains(r.ForLLM, "image/png") {
		t.Errorf("binary content: %+v", r)
	}
	if r := w.get("http://public.test/big"); r.IsError || !strings.HasSuffix(r.ForLLM, "[truncated]") || len(r.ForLLM) > 110_000 {
		t.Errorf("big page: error=%v len=%d", r.IsError, len(r.ForLLM))
	}
	if r := w.get("http://public.test/missing"); !r.IsError || !strings.Contains(r.ForLLM, "HTTP 404") {
		t.Errorf("404: %+v", r)
	}
	if got := w.fetch.ApprovalKey(json.RawMessage(`{"url":"https://Docs.Example.com/a?b"}`)); got != "docs.example.com" {
		t.Errorf("approval key = %q, want the host", got)
	}
}

func TestWebFetchAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { fmt.Fprint(rw, "intranet") }))
	defer srv.Close()
	raw, _ := json.Marshal(map[string]string{"url": srv.URL})
	if r := web.NewFetch(web.FetchOptions{}).Execute(context.Background(), raw); !r.IsError {
		t.Fatalf("a loopback server was fetched by default: %+v", r)
	}
	if r := web.NewFetch(web.FetchOptions{AllowPrivate: true}).Execute(context.Background(), raw); r.IsError || !strings.Contains(r.ForLLM, "intranet") {
		t.Fatalf("allow_private: %+v", r)
	}
}
