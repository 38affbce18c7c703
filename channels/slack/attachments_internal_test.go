package slack

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

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

const fileTestToken = "xoxb-file-test-token"

func newFileChannel(t *testing.T, apiURL string) *Channel {
	t.Helper()
	c, err := New(Options{BotToken: fileTestToken, SigningSecret: "s", APIURL: apiURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.transport.CloseIdleConnections)
	return c
}

// The rules of a link are channels.FileHosts'; these are Slack's hosts.
func TestFileHostAllowed(t *testing.T) {
	c := newFileChannel(t, "")
	for link, want := range map[string]bool{
		"https://files.slack.com/files-pri/T1-F1/download/a.png": true,
		"https://slack.com/api/x":                                true, // the API host gets the token anyway
		"http://files.slack.com/files-pri/T1-F1/a.png":           false,
		"https://hooks.slack.com/a.png":                          false,
	} {
		if got := c.fileHostAllowed(link); got != want {
			t.Errorf("fileHostAllowed(%q) = %v, want %v", link, got, want)
		}
	}
	tc := newFileChannel(t, "http://127.0.0.1:4567/")
	if !tc.fileHostAllowed("http://127.0.0.1:4567/files-pri/x") || tc.fileHostAllowed("http://127.0.0.1:4568/files-pri/x") {
		t.Error("with a configured API URL, only its scheme and host are allowed besides Slack's file host")
	}
}

// A download's 429 is waited out for the last Retry-After it names, and
// never for less than a second, as Slack's other 429s are.
func TestDownloadRetryAfter(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   time.Duration
	}{
		{nil, time.Second},
		{[]string{"7"}, 7 * time.Second},
		{[]string{"2", "9"}, 9 * time.Second},
		{[]string{"30", "junk"}, time.Second},
		{[]string{"0"}, time.Second},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Retry-After", v)
		}
		got, ok := rateLimited(&channels.RetryAfterError{After: channels.LastRetryAfter(h)})
		if !ok || got != c.want {
			t.Errorf("Retry-After %q: wait %v, want %v", c.values, got, c.want)
		}
	}
}

func TestSizedReader(t *testing.T) {
	got, err := io.ReadAll(&sizedReader{r: strings.NewReader("abcdef"), left: 4})
	if err != nil || string(got) != "abcd" {
		t.Errorf("a longer source read as %q, %v; want the announced 4 bytes", got, err)
	}
	if _, err := io.ReadAll(&sizedReader{r: strings.NewReader("ab"), left: 4}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a shorter source ended with %v, want io.ErrUnexpectedEOF", err)
	}
}

// An upload URL off Slack's file host is never sent the bytes or the
// token, even when the API itself names it.
func TestUploadURLOffTheFileHostGetsNothing(t *testing.T) {
	other, hits := channeltest.Elsewhere(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/files.getUploadURLExternal" {
			_, _ = w.Write([]byte(`{"ok":true,"file_id":"F1","upload_url":"` + other.URL + `/upload/v1/F1"}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(api.Close)
	c := newFileChannel(t, api.URL)
	var opens atomic.Int32
	f := &channels.File{Kind: channels.KindDocument, Name: "a.txt", Size: 3, Open: func(context.Context) (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(strings.NewReader("abc")), nil
	}}
	_, err := c.Send(context.Background(), channels.Outbound{To: channels.Address{Platform: Platform, ChatID: "C1"}, File: f})
	if !errors.Is(err, errForeignFileHost) || !errors.Is(err, channels.ErrPermanent) || strings.Contains(err.Error(), fileTestToken) {
		t.Errorf("Send = %v, want a permanent errForeignFileHost without the token", err)
	}
	if hits.Load() != 0 || opens.Load() != 0 {
		t.Errorf("foreign upload host got %d requests, file opened %d times; want none", hits.Load(), opens.Load())
	}
}
