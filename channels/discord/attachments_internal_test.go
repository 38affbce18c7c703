package discord

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

const fileTestToken = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.file.test-secret"

func newFileChannel(t *testing.T, apiURL string) *Channel {
	t.Helper()
	c, err := New(Options{Token: fileTestToken, APIURL: apiURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.files.CloseIdleConnections)
	return c
}

func TestOpenAttachmentFollowsNoRedirectToAnotherHost(t *testing.T) {
	other, hits := channeltest.CountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("not yours")) })
	api, downloads := channeltest.CountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/attachments/1/2/moved.png" {
			http.Redirect(w, r, "/attachments/1/2/x.png", http.StatusFound) // same host: followed
			return
		}
		http.Redirect(w, r, other.URL+"/x.png", http.StatusFound)
	})
	c := newFileChannel(t, api.URL)
	rc, err := c.openAttachment(context.Background(), api.URL+"/attachments/1/2/moved.png")
	if err == nil {
		rc.Close()
		t.Fatal("a download redirected to another host succeeded")
	}
	if !errors.Is(err, errForeignFileHost) || strings.Contains(err.Error(), fileTestToken) {
		t.Errorf("error = %v, want errForeignFileHost without the token", err)
	}
	if downloads.Load() != 2 || hits.Load() != 0 {
		t.Errorf("downloads %d, requests elsewhere %d; want 2 and 0", downloads.Load(), hits.Load())
	}
}

// The rules of a link are channels.FileHosts'; these are Discord's hosts.
func TestFileHost(t *testing.T) {
	prod := &Channel{opts: Options{APIURL: DefaultAPIURL}}
	test := &Channel{opts: Options{APIURL: "http://127.0.0.1:4000"}}
	for _, c := range []struct {
		link       string
		prod, test bool
	}{
		{"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1&hm=2", true, true},
		{"https://media.discordapp.net/attachments/1/2/a.png", true, true},
		{"http://cdn.discordapp.com/attachments/1/2/a.png", false, false},
		{"https://discord.com/attachments/1/2/a.png", false, false}, // the API host serves no attachments
		{"http://127.0.0.1:4000/attachments/1/2/a.png", false, true},
	} {
		if got := prod.fileHost(c.link); got != c.prod {
			t.Errorf("against Discord: fileHost(%q) = %v, want %v", c.link, got, c.prod)
		}
		if got := test.fileHost(c.link); got != c.test {
			t.Errorf("against a test server: fileHost(%q) = %v, want %v", c.link, got, c.test)
		}
	}
}
