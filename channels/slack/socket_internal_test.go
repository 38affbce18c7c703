package slack

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// The Socket Mode dialer writes a response of up to Slack's 20 KB limit as
// one frame (Slack does not put continuation frames together again) while
// its write buffer comes from a pool, so an idle connection holds none.
func TestSocketDialerWritesOneFrameFromAPool(t *testing.T) {
	d := socketDialer()
	if d.WriteBufferPool == nil {
		t.Fatal("the Socket Mode dialer keeps a write buffer per connection; want one from a pool")
	}
	first := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		// The frame's first two bytes, as they arrive: FIN and opcode, then
		// the length code.
		head := make([]byte, 2)
		_, err = io.ReadFull(conn.NetConn(), head)
		if err != nil {
			t.Error(err)
		}
		first <- head
	}))
	defer srv.Close()
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 20*1024))); err != nil {
		t.Fatal(err)
	}
	head := <-first
	if head[0] != 0x81 { // FIN set, text
		t.Fatalf("a 20 KB response went out as a first frame %#x; want one final text frame (0x81)", head[0])
	}
}
