package discordtest

import (
	"io"
	"mime"
	"net/http"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// StallUpload makes the next message create carrying files (a multipart
// body) stop reading after its first after bytes, as a slow network does
// mid-upload, until the stall is released, the client goes away or the
// server closes. A create whose client dies before its last byte is
// refused like any unreadable form: it is no message.
func (s *Server) StallUpload(after int64) *channeltest.Stall {
	st := channeltest.NewStall(after)
	s.mu.Lock()
	s.stall = st
	s.mu.Unlock()
	return st
}

// stallBody reads r's body through the stall set for the next upload, if
// r is one (a multipart body), and forgets that stall.
func (s *Server) stallBody(r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return
	}
	s.mu.Lock()
	st := s.stall
	s.stall = nil
	s.mu.Unlock()
	if st != nil {
		r.Body = stalledBody{st.Reader(r.Context(), s.done, r.Body), r.Body}
	}
}

// stalledBody is a request body read through its stall.
type stalledBody struct {
	io.Reader
	io.Closer
}
