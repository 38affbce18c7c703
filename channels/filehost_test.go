package channels_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

var errRefused = errors.New("not on the file host")

func TestFileHostsAllows(t *testing.T) {
	prod := channels.FileHosts{Hosts: []string{"cdn.example.com", "media.example.net"}}
	test := channels.FileHosts{Hosts: prod.Hosts, API: "http://127.0.0.1:4000/api/"}
	for _, c := range []struct {
		link       string
		prod, test bool
	}{
		{"https://cdn.example.com/a/b.png?sig=1", true, true},
		{"https://media.example.net/a.png", true, true},
		{"https://CDN.Example.com/a.png", true, true}, // DNS ignores case
		{"http://cdn.example.com/a.png", false, false},
		{"https://cdn.example.com:8443/a.png", false, false},
		{"https://cdn.example.com.evil.example/a.png", false, false},
		{"https://evil.example/cdn.example.com/a.png", false, false},
		{"https://me@cdn.example.com/a.png", false, false},
		{"https://me:pw@127.0.0.1:4000/a.png", false, false},
		{"http://127.0.0.1:4000/files/a.png", false, true},
		{"http://127.0.0.1:4001/files/a.png", false, false},
		{"https://127.0.0.1:4000/files/a.png", false, false},
		{"/files/a.png", false, false},
		{"::not a url", false, false},
		{"", false, false},
	} {
		if got := prod.Allows(c.link); got != c.prod {
			t.Errorf("hosts only: Allows(%q) = %v, want %v", c.link, got, c.prod)
		}
		if got := test.Allows(c.link); got != c.test {
			t.Errorf("with an API URL: Allows(%q) = %v, want %v", c.link, got, c.test)
		}
	}
	// An API URL without a host allows nothing, not every host-less link.
	if (channels.FileHosts{API: "/relative"}).Allows("/relative/a.png") {
		t.Error("a host-less API URL allowed a link")
	}
}

func TestFileHostsClientFollowsRedirectsOnlyOnTheHosts(t *testing.T) {
	other, foreign := channeltest.CountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("not yours")) })
	api, hits := channeltest.CountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/file", http.StatusFound)
		case "/file":
			_, _ = w.Write([]byte("the file"))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			http.Redirect(w, r, other.URL+"/file", http.StatusFound)
		}
	})
	client := channels.FileHosts{API: api.URL, Refused: errRefused, Name: "test: file download"}.Client(http.DefaultTransport)
	if client.Timeout != 0 {
		t.Errorf("client timeout %v: a large file must be bounded by its context only", client.Timeout)
	}

	resp, err := client.Get(api.URL + "/moved")
	if err != nil {
		t.Fatalf("a redirect on the same host: %v", err)
	}
	_ = resp.Body.Close()
	if hits.Load() != 2 {
		t.Errorf("a redirect on the same host made %d requests, want 2", hits.Load())
	}

	hits.Store(0)
	resp, err = client.Get(api.URL + "/away")
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("a redirect to another host was followed")
	}
	if !errors.Is(err, errRefused) || hits.Load() != 1 || foreign.Load() != 0 {
		t.Errorf("redirect away: %v after %d requests, %d elsewhere; want Refused after 1, none elsewhere", err, hits.Load(), foreign.Load())
	}

	hits.Store(0)
	resp, err = client.Get(api.URL + "/loop")
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("an endless redirect ended well")
	}
	if !strings.Contains(err.Error(), "test: file download: too many redirects") || hits.Load() != 5 {
		t.Errorf("endless redirect: %v after %d requests, want too many redirects after 5", err, hits.Load())
	}
}
