package main

import (
	"encoding/json"
	"net/http"
	"sync"
)

// refusals counts what a lean fake could not answer and keeps why it
// refused the last, for the run to report.
type refusals struct {
	mu   sync.Mutex
	n    int
	last string
}

// refuse counts why and answers status with body, as JSON.
func (r *refusals) refuse(w http.ResponseWriter, status int, why string, body any) {
	r.mu.Lock()
	r.n++
	r.last = why
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// complaints returns how many were refused and why the last was.
func (r *refusals) complaints() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, r.last
}
