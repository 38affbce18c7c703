package discord

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// newTransport returns the HTTP transport for REST calls. When apiURL is not
// Discord's own host, it rewrites every request discordgo addresses to
// discord.com onto apiURL, keeping the path (/api/v9/…) and query. This is
// how Options.APIURL takes effect without touching discordgo's
// package-level endpoint variables.
func newTransport(apiURL string) (http.RoundTripper, error) {
	target, err := url.Parse(strings.TrimRight(apiURL, "/"))
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("discord: api url %q is not an http(s) URL; set discord.api_url to e.g. %s or leave it empty", apiURL, DefaultAPIURL)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	discord, err := url.Parse(discordgo.EndpointDiscord) // read only
	if err != nil {
		return nil, fmt.Errorf("discord: discordgo endpoint %q: %w", discordgo.EndpointDiscord, err)
	}
	if target.Scheme == discord.Scheme && target.Host == discord.Host && target.Path == "" {
		return base, nil
	}
	return &rewriter{base: base, from: discord.Host, to: target}, nil
}

// rewriter sends requests for one host to another base URL.
type rewriter struct {
	base http.RoundTripper
	from string   // host to rewrite: discord.com
	to   *url.URL // scheme, host and optional path prefix to use instead
}

// RoundTrip implements http.RoundTripper.
func (r *rewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != r.from {
		return r.base.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	u := *req.URL
	u.Scheme, u.Host = r.to.Scheme, r.to.Host
	u.Path = r.to.Path + u.Path
	if u.RawPath != "" {
		u.RawPath = r.to.EscapedPath() + u.RawPath
	}
	out.URL, out.Host = &u, ""
	return r.base.RoundTrip(out)
}

// handshakeTimeout bounds connecting to the gateway: dialling, the
// websocket upgrade, and waiting for Hello and Ready. discordgo's Open has
// no deadline of its own, so Start aborts the connection after this long.
const handshakeTimeout = 30 * time.Second

// connTracker remembers the gateway's network connection, so Start can cut
// a hanging handshake short: discordgo's Open takes no context.
type connTracker struct {
	mu   sync.Mutex
	conn net.Conn
}

// dialer returns the websocket dialer for the session. Its write buffer
// comes from a pool for each message rather than staying with the
// connection, so an idle gateway connection keeps none.
func (t *connTracker) dialer() *websocket.Dialer {
	var d net.Dialer
	return &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: handshakeTimeout,
		WriteBufferPool:  &sync.Pool{},
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			t.mu.Lock()
			t.conn = conn
			t.mu.Unlock()
			return conn, nil
		},
	}
}

// abort closes the current connection, failing any read or write on it.
func (t *connTracker) abort() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn != nil {
		_ = t.conn.Close()
	}
}
