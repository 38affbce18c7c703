package channels

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Download makes single GETs of file links and maps the answer onto what
// the adapters' retry loops (RateLimits) and error wording build on.
type Download struct {
	// Client makes the request; FileHosts.Client, so that no redirect
	// leaves the platform's hosts.
	Client *http.Client
	// Header is sent with each request (the bot token, where the
	// platform's file host wants it).
	Header http.Header
	// Wait, when set, reads how long a 429 answer asks to wait, for a
	// platform that says so in the body; LastRetryAfter of the answer's
	// header otherwise. The body is closed after it.
	Wait func(*http.Response) time.Duration
}

// Once makes one GET of link. It returns the answer of a 200, whose body
// the caller reads and closes; a 429 as a *RetryAfterError wrapping a
// *StatusError; any other status as a *StatusError, for the adapter to
// word (which statuses retrying cannot fix differs by platform). The body
// of an answer returned as an error is closed.
func (d Download) Once(ctx context.Context, link string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range d.Header {
		req.Header[k] = v
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp, nil
	case http.StatusTooManyRequests:
		defer resp.Body.Close()
		after := LastRetryAfter(resp.Header)
		if d.Wait != nil {
			after = d.Wait(resp)
		}
		return nil, &RetryAfterError{After: after, Err: &StatusError{Code: resp.StatusCode, Status: resp.Status}}
	}
	_ = resp.Body.Close()
	return nil, &StatusError{Code: resp.StatusCode, Status: resp.Status}
}

// StatusError is a file host's answer other than 200.
type StatusError struct {
	Code   int    // the HTTP status code
	Status string // the status line's text, "404 Not Found"
}

func (e *StatusError) Error() string { return "answered " + e.Status }

// LastRetryAfter is how long the last Retry-After header of h asks to
// wait, in seconds or as a date: a second when absent or unreadable, at
// least a millisecond. Of several Retry-After headers the last one counts.
func LastRetryAfter(h http.Header) time.Duration {
	vals := h.Values("Retry-After")
	if len(vals) == 0 {
		return time.Second
	}
	v := strings.TrimSpace(vals[len(vals)-1])
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 && secs < 1e6 {
		return max(time.Duration(secs*float64(time.Second)), time.Millisecond)
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), time.Millisecond)
	}
	return time.Second
}
