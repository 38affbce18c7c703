package llmtest

// FailModel makes every chat request for model fail with HTTP status,
// before any enqueued reply or the responder is used (those stay for the
// requests for other models); status 0 makes model answer again. It stands
// for one model of a server being down while the others answer, as
// llm.fallbacks expects.
func (s *Server) FailModel(model string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.failing, model)
		return
	}
	if s.failing == nil {
		s.failing = map[string]int{}
	}
	s.failing[model] = status
}
