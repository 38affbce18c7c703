package slacktest

import "github.com/switchboard-chat/switchboard/channels/channeltest"

// StallUpload makes the next POST of bytes to an upload URL stop reading
// after its first after bytes, as a slow network does mid-upload, until
// the stall is released, the client goes away or the server closes. An
// upload whose client dies before its last byte is not taken: the file
// is never shared, so it is no message (Uploads does not list it).
func (s *Server) StallUpload(after int64) *channeltest.Stall {
	st := channeltest.NewStall(after)
	s.mu.Lock()
	s.stall = st
	s.mu.Unlock()
	return st
}

// takeStallLocked returns (and forgets) the stall set for the next
// upload. s.mu must be held.
func (s *Server) takeStallLocked() *channeltest.Stall {
	st := s.stall
	s.stall = nil
	return st
}
