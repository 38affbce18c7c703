package telegram

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

const fileTestToken = "555:file-test-token"

// fileAPI is a Bot API server whose getFile names path "x" and whose
// download of it answers with download; it counts the downloads asked.
func fileAPI(t *testing.T, download http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var downloads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bot" + fileTestToken + "/getFile":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true,"result":{"file_id":"f","file_unique_id":"uf","file_path":"x"}}`))
		case "/file/bot" + fileTestToken + "/x":
			downloads.Add(1)
			download(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &downloads
}

func newFileChannel(t *testing.T, apiURL string) *Channel {
	t.Helper()
	c, err := New(Options{Token: fileTestToken, APIURL: apiURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.transport.CloseIdleConnections)
	return c
}

func TestOpenFileFollowsNoRedirectToAnotherHost(t *testing.T) {
	other, hits := channeltest.Elsewhere(t)
	api, downloads := fileAPI(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	})
	c := newFileChannel(t, api.URL)
	rc, err := c.openFile(context.Background(), "f")
	if err == nil {
		rc.Close()
		t.Fatal("a download redirected to another host succeeded")
	}
	if !errors.Is(err, errForeignFileHost) || strings.Contains(err.Error(), fileTestToken) {
		t.Errorf("error = %v, want errForeignFileHost without the token", err)
	}
	if downloads.Load() != 1 || hits.Load() != 0 {
		t.Errorf("downloads %d, requests elsewhere %d; want 1 and 0", downloads.Load(), hits.Load())
	}
}

func TestOpenFileRefusesALinkOffTheAPIServer(t *testing.T) {
	other, hits := channeltest.Elsewhere(t)
	api, downloads := fileAPI(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	c := newFileChannel(t, api.URL)
	// The client builds links from its own server URL; a configuration
	// naming another server must make every link foreign.
	c.opts.APIURL = other.URL
	if rc, err := c.openFile(context.Background(), "f"); !errors.Is(err, errForeignFileHost) {
		if rc != nil {
			rc.Close()
		}
		t.Fatalf("openFile = %v, want errForeignFileHost", err)
	}
	if downloads.Load() != 0 || hits.Load() != 0 {
		t.Errorf("downloads %d, requests elsewhere %d; want none", downloads.Load(), hits.Load())
	}
}

// The rules of a link are channels.FileHosts'; Telegram's one host is the
// configured Bot API server.
func TestFileHostsAreTheAPIServer(t *testing.T) {
	c := &Channel{opts: Options{APIURL: "https://api.telegram.org"}}
	for link, want := range map[string]bool{
		"https://api.telegram.org/file/bot1:x/photos/a.jpg":      true,
		"http://api.telegram.org/file/bot1:x/a":                  false,
		"https://evil.example/file/bot1:x/a":                     false,
		"https://api.telegram.org/file/bot1:x/@evil.example/../": true, // a path, still the same host
	} {
		if got := c.fileHosts().Allows(link); got != want {
			t.Errorf("Allows(%q) = %v, want %v", link, got, want)
		}
	}
}

func TestDownloadRetryAfter(t *testing.T) {
	for _, c := range []struct {
		body    string
		headers []string
		want    time.Duration
	}{
		{`{"ok":false,"error_code":429,"parameters":{"retry_after":3}}`, []string{"7"}, 3 * time.Second},
		{`not json`, []string{"2", "5"}, 5 * time.Second},
		{``, []string{"0"}, time.Second},
		{``, nil, time.Second},
	} {
		resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(c.body))}
		for _, v := range c.headers {
			resp.Header.Add("Retry-After", v)
		}
		if got := downloadRetryAfter(resp); got != c.want {
			t.Errorf("body %q, Retry-After %q: wait %v, want %v", c.body, c.headers, got, c.want)
		}
	}
}
