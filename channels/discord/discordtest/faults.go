package discordtest

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// Faults: the errors and rate limits a test makes the fake answer with.

// Failure is an error the server returns instead of handling a call.
type Failure struct {
	Status     int           // HTTP status, e.g. 429, 403, 404, 500
	Code       int           // Discord's JSON error code; defaults by Status
	Message    string        // defaults by Status
	RetryAfter time.Duration // 429: retry_after in the body and Retry-After header
	Global     bool          // 429: a global rate limit
	// ExtraRetryAfter are more Retry-After values sent after the one
	// RetryAfter makes (whole seconds, rounded up), as a proxy adding its
	// own would; a client should heed the last.
	ExtraRetryAfter []string
	Times           int // how many calls fail; at least 1
}

// Fail makes the next times calls of route fail with status; a 429 carries
// retry_after = retryAfter. Discord's JSON error code follows the status:
// 403 Missing Access (50001), 404 Unknown Channel (10003), 400 Invalid Form
// Body (50035).
func (s *Server) Fail(route string, status int, retryAfter time.Duration, times int) {
	s.FailWith(route, Failure{Status: status, RetryAfter: retryAfter, Times: times})
}

// FailWith makes the next f.Times calls of route fail as f describes.
func (s *Server) FailWith(route string, f Failure) {
	f.Times = max(f.Times, 1)
	code, msg := defaultError(f.Status)
	if f.Code == 0 {
		f.Code = code
	}
	if f.Message == "" {
		f.Message = msg
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], f)
}

func defaultError(status int) (int, string) {
	switch status {
	case http.StatusTooManyRequests:
		return 0, "You are being rate limited."
	case http.StatusBadRequest:
		return 50035, "Invalid Form Body"
	case http.StatusUnauthorized:
		return 0, "401: Unauthorized"
	case http.StatusForbidden:
		return 50001, "Missing Access"
	case http.StatusNotFound:
		return 10003, "Unknown Channel"
	}
	return 0, http.StatusText(status)
}

// UseUp makes the next answer of route say, in X-RateLimit headers, that
// no more requests of its bucket are allowed for resetAfter, as Discord
// says of a bucket used up. A client that heeds the headers holds its next
// request on that bucket until then.
func (s *Server) UseUp(route string, resetAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usedUp[route] = resetAfter
}

// writeFailure writes an injected failure in Discord's shape.
func writeFailure(w http.ResponseWriter, f Failure) {
	if f.Status != http.StatusTooManyRequests {
		writeError(w, f.Status, f.Code, f.Message)
		return
	}
	secs := f.RetryAfter.Seconds()
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
	for _, v := range f.ExtraRetryAfter {
		w.Header().Add("Retry-After", v)
	}
	if f.Global {
		w.Header().Set("X-RateLimit-Global", "true")
	}
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"message": f.Message, "retry_after": secs, "global": f.Global,
	})
}
