package mcp

import (
	"net/http"
	"testing"
)

// TestHTTPClientKeepsConnectionsForConcurrentCalls: with or without
// headers, an HTTP server's client keeps idleMCPConns idle connections to
// it (http.DefaultTransport's 2 made every further concurrent call open and
// close one).
func TestHTTPClientKeepsConnectionsForConcurrentCalls(t *testing.T) {
	for name, c := range map[string]*http.Client{
		"no headers": httpClient(nil),
		"headers":    httpClient(map[string]string{"Authorization": "Bearer x"}),
	} {
		rt := c.Transport
		if h, ok := rt.(headerTransport); ok {
			rt = h.next
		}
		tr, _ := rt.(*http.Transport)
		if tr == nil || tr == http.DefaultTransport || tr.MaxIdleConnsPerHost < idleMCPConns {
			t.Errorf("%s: transport %T (%+v), want one of its own keeping %d idle connections per host", name, rt, tr, idleMCPConns)
		}
	}
}
