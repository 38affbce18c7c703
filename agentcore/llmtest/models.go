package llmtest

import (
	"encoding/json"
	"net/http"
)

// SetModels sets the model ids GET /v1/models lists ("llmtest" until
// called). With none it answers 404, as servers without a model list do.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = append([]string(nil), ids...)
	s.mu.Unlock()
}

// serveModels lists the models in OpenAI's shape: {"object":"list",
// "data":[{"id":…,"object":"model",…}]}.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids := s.models
	s.mu.Unlock()
	if len(ids) == 0 {
		writeError(w, http.StatusNotFound, 0, "llmtest: no route for "+r.Method+" "+r.URL.Path)
		return
	}
	data := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "llmtest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}
