package channels_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

func TestDownloadOnce(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	srv, _ := channeltest.CountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/file":
			_, _ = w.Write([]byte("the bytes"))
		case "/limited":
			w.Header().Add("Retry-After", "9")
			w.Header().Add("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"wait":4}`))
		default:
			http.NotFound(w, r)
		}
	})
	ctx := context.Background()
	d := channels.Download{Client: srv.Client(), Header: http.Header{"Authorization": {"Bearer secret"}}}

	resp, err := d.Once(ctx, srv.URL+"/file")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	mu.Lock()
	sent := append([]string(nil), auth...)
	mu.Unlock()
	if string(got) != "the bytes" || len(sent) != 1 || sent[0] != "Bearer secret" {
		t.Errorf("200: body %q, Authorization sent %q", got, sent)
	}

	_, err = d.Once(ctx, srv.URL+"/limited")
	var ra *channels.RetryAfterError
	var status *channels.StatusError
	if !errors.As(err, &ra) || ra.After != 2*time.Second || !errors.As(err, &status) || status.Code != http.StatusTooManyRequests {
		t.Errorf("429: %v, want a RetryAfterError of the last Retry-After (2s) around status 429", err)
	}

	d.Wait = func(resp *http.Response) time.Duration {
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), `"wait":4`) {
			return time.Minute
		}
		return 4 * time.Second
	}
	if _, err = d.Once(ctx, srv.URL+"/limited"); !errors.As(err, &ra) || ra.After != 4*time.Second {
		t.Errorf("429 with Wait: %v, want the 4s the body names", err)
	}

	_, err = d.Once(ctx, srv.URL+"/gone")
	if !errors.As(err, &status) || status.Code != http.StatusNotFound || errors.As(err, &ra) {
		t.Errorf("404: %v, want a StatusError 404 and no wait", err)
	}
	if err.Error() != "answered 404 Not Found" {
		t.Errorf("404 reads %q", err)
	}
}

func TestLastRetryAfter(t *testing.T) {
	for _, c := range []struct {
		vals []string
		want time.Duration
	}{
		{nil, time.Second},
		{[]string{"3"}, 3 * time.Second},
		{[]string{"2", "9"}, 9 * time.Second},
		{[]string{"5", "0.25"}, 250 * time.Millisecond},
		{[]string{"0"}, time.Millisecond},
		{[]string{"30", "junk"}, time.Second},
		{[]string{"soon"}, time.Second},
		{[]string{"-4"}, time.Second},
	} {
		h := http.Header{}
		for _, v := range c.vals {
			h.Add("Retry-After", v)
		}
		if got := channels.LastRetryAfter(h); got != c.want {
			t.Errorf("Retry-After %q: %v, want %v", c.vals, got, c.want)
		}
	}
	h := http.Header{"Retry-After": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}
	if got := channels.LastRetryAfter(h); got < 59*time.Minute || got > time.Hour {
		t.Errorf("Retry-After as a date an hour ahead: %v", got)
	}
}
