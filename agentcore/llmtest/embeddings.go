package llmtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
)

// EmbeddingDims is the size of the fake's embeddings.
const EmbeddingDims = 256

// Embedding returns the fake's embedding of text: a normalized bag of
// lower-cased words hashed into EmbeddingDims buckets, with synonyms set by
// Synonym counted as the same word. Texts sharing words are close.
func (s *Server) Embedding(text string) []float32 {
	s.mu.Lock()
	syn := s.synonyms
	s.mu.Unlock()
	v := make([]float64, EmbeddingDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if to, ok := syn[w]; ok {
			w = to
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%EmbeddingDims]++
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, EmbeddingDims)
	if norm == 0 {
		return out
	}
	for i, x := range v {
		out[i] = float32(x / math.Sqrt(norm))
	}
	return out
}

// Synonym makes the fake embed word as canonical (so "automobile" lands
// where "car" does), for tests of search by meaning.
func (s *Server) Synonym(word, canonical string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.synonyms == nil {
		s.synonyms = map[string]string{}
	}
	s.synonyms[strings.ToLower(word)] = strings.ToLower(canonical)
}

// EmbeddingRequests returns how many embedding requests were served.
func (s *Server) EmbeddingRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedCalls
}

// serveEmbeddings answers POST /v1/embeddings (input: a string or a list).
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Model == "" {
		writeError(w, http.StatusBadRequest, 0, "llmtest: embeddings need a model and an input")
		return
	}
	var inputs []string
	if err := json.Unmarshal(body.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(body.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, 0, "llmtest: input must be a string or a list of strings")
			return
		}
		inputs = []string{one}
	}
	s.mu.Lock()
	s.embedCalls++
	s.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(inputs))
	for i, in := range inputs {
		data = append(data, item{Object: "embedding", Index: i, Embedding: s.Embedding(in)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body.Model,
		"usage": map[string]int{"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})
}
