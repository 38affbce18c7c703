package telegram

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// sendAheadLimit is the largest request body sent with a Content-Length:
// every Bot API call but file uploads.
const sendAheadLimit = 64 << 10

// withLength reads req's body ahead, up to limit bytes, so that the
// request goes out with a Content-Length in as few writes as its size
// allows. go-telegram/bot streams every request's multipart form through
// a pipe, which net/http sends chunked, flushing each chunk: a
// sendMessage left in one write (and woke the server) per form field. A
// larger body (an upload) is sent as before, chunked, after the part read.
func withLength(req *http.Request, limit int) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength >= 0 && req.GetBody != nil {
		return req, nil
	}
	head, err := io.ReadAll(io.LimitReader(req.Body, int64(limit)+1))
	if err != nil {
		_ = req.Body.Close()
		return nil, fmt.Errorf("read request body: %w", err)
	}
	r := req.Clone(req.Context())
	if len(head) > limit {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), req.Body), req.Body}
		r.ContentLength = -1
		return r, nil
	}
	_ = req.Body.Close()
	r.ContentLength = int64(len(head))
	r.Body = io.NopCloser(bytes.NewReader(head))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(head)), nil }
	return r, nil
}
