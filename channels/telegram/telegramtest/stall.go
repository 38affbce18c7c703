package telegramtest

import (
	"strings"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// StallUpload makes the next call of method (sendPhoto, sendVoice or
// sendDocument) stop reading its file after the first after bytes, as a
// slow network does mid-upload, until release is called, the client goes
// away or the server closes. reached is closed once the upload stopped. A
// client that dies before its whole file is sent sent no message: nothing
// is recorded (bytes it wrote before dying may still arrive, as on a real
// network). release may be called more than once.
func (s *Server) StallUpload(method string, after int64) (reached <-chan struct{}, release func()) {
	st := channeltest.NewStall(after)
	s.mu.Lock()
	if s.stalls == nil {
		s.stalls = map[string]*channeltest.Stall{}
	}
	s.stalls[strings.ToLower(method)] = st
	s.mu.Unlock()
	return st.Reached(), st.Release
}

// takeStall returns (and forgets) the stall set for method's next call.
func (s *Server) takeStall(method string) *channeltest.Stall {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stalls[method]
	delete(s.stalls, method)
	return st
}
