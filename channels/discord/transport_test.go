package discord

import (
	"net/http"
	"strings"
	"testing"
)

// recorder is a RoundTripper that records the URL it is asked for.
type recorder struct{ got []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req.URL.String()+" host="+req.Host)
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: req}, nil
}

func TestTransportRewritesDiscordHost(t *testing.T) {
	tr, err := newTransport("http://127.0.0.1:8080/prefix/")
	if err != nil {
		t.Fatal(err)
	}
	rw, ok := tr.(*rewriter)
	if !ok {
		t.Fatalf("transport for a custom URL is %T, want *rewriter", tr)
	}
	rec := &recorder{}
	rw.base = rec
	for _, u := range []string{
		"https://discord.com/api/v9/channels/1/messages?wait=true",
		"https://cdn.discordapp.com/avatars/1/a.png",
	} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		resp, err := rw.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if req.URL.String() != u {
			t.Errorf("the caller's request was modified: %s", req.URL)
		}
	}
	want := []string{
		"http://127.0.0.1:8080/prefix/api/v9/channels/1/messages?wait=true host=",
		"https://cdn.discordapp.com/avatars/1/a.png host=cdn.discordapp.com",
	}
	if strings.Join(rec.got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests went to\n%s\nwant\n%s", strings.Join(rec.got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTransportForDiscordIsPlain(t *testing.T) {
	for _, u := range []string{"", DefaultAPIURL, DefaultAPIURL + "/"} {
		if u == "" {
			u = DefaultAPIURL
		}
		tr, err := newTransport(u)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tr.(*http.Transport); !ok {
			t.Errorf("transport for %q is %T, want a plain *http.Transport", u, tr)
		}
	}
	for _, bad := range []string{"discord.com", "ws://x", "http://", "::"} {
		if _, err := newTransport(bad); err == nil {
			t.Errorf("newTransport(%q) accepted", bad)
		}
	}
}
