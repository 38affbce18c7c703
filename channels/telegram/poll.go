package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
)

// albumPollEvery paces getUpdates while an album is being collected: such a
// poll asks from the album's first part on (so as not to confirm it), and
// Telegram answers it at once with the parts it has, so it would otherwise
// spin.
const albumPollEvery = 150 * time.Millisecond

// pollClient is the HTTP client the library uses. It watches getUpdates:
// each call waits until the updates of the previous call are handled, so
// its offset confirms only handled updates, and its outcome tells Ready
// whether polling works. While an album is being collected its parts are
// parked (see inflight): the next poll then goes out, paced, with its offset
// lowered to the album's first part, and the updates the library dispatched
// already are taken out of the answer. Every request's body is read ahead
// first (withLength), so a call leaves in one write, not one per form field.
type pollClient struct {
	http *http.Client
	ch   *Channel
}

// Do implements bot.HttpClient.
func (p *pollClient) Do(req *http.Request) (*http.Response, error) {
	req, err := withLength(req, sendAheadLimit)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(req.URL.Path, "/getUpdates") {
		return p.http.Do(req)
	}
	ctx := req.Context()
	if err := p.ch.inflight.wait(ctx); err != nil {
		return nil, err
	}
	var from int64 // updates below it were dispatched already; 0: none were
	if p.ch.inflight.offsetFloor() > 0 {
		if err := pause(ctx, albumPollEvery); err != nil {
			return nil, err
		}
		if err := p.ch.inflight.wait(ctx); err != nil { // the album closed meanwhile
			return nil, err
		}
		if floor := p.ch.inflight.offsetFloor(); floor > 0 {
			if req, from, err = withOffset(req, floor); err != nil {
				return nil, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // stopping: do not confirm anything more
	}
	resp, err := p.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			p.ch.failed("poll", err, 0)
		}
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		p.ch.failed("poll", err, 0)
		return nil, fmt.Errorf("read getUpdates response: %w", err)
	}
	body = p.observe(resp.StatusCode, body, from)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// observe records a getUpdates answer for Ready and inflight, and returns
// the body the library is to see: without the updates below from.
func (p *pollClient) observe(status int, body []byte, from int64) []byte {
	var r struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
	}
	switch {
	case json.Unmarshal(body, &r) != nil:
		p.ch.failed("poll", fmt.Errorf("getUpdates answered HTTP %d with an undecodable body", status), 0)
		return body
	case !r.OK:
		p.ch.failed("poll", fmt.Errorf("getUpdates: %d %s", r.ErrorCode, r.Description), 0)
		return body
	}
	p.ch.succeeded("poll")
	kept := r.Result[:0]
	var updates []*models.Update
	for _, raw := range r.Result {
		var u models.Update
		if json.Unmarshal(raw, &u) != nil {
			return body // the library fails on it too, and dispatches nothing
		}
		if u.ID >= from {
			kept = append(kept, raw)
			updates = append(updates, &u)
		}
	}
	p.ch.inflight.fetched(updates)
	if from == 0 {
		return body
	}
	out, err := json.Marshal(map[string]any{"ok": true, "result": kept})
	if err != nil {
		return body
	}
	return out
}

// withOffset returns req, a getUpdates call, asking from update floor on
// without waiting, and the offset the library asked for (0: none).
func withOffset(req *http.Request, floor int64) (*http.Request, int64, error) {
	fields, err := formFields(req)
	if err != nil {
		return nil, 0, fmt.Errorf("rewrite getUpdates: %w", err)
	}
	asked, _ := strconv.ParseInt(fields.get("offset"), 10, 64)
	if asked == 0 || asked <= floor {
		return req, 0, nil
	}
	fields.set("offset", strconv.FormatInt(floor, 10))
	fields.set("timeout", "0")
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f.name, f.value); err != nil {
			return nil, 0, fmt.Errorf("rewrite getUpdates: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, 0, fmt.Errorf("rewrite getUpdates: %w", err)
	}
	body := buf.Bytes()
	r := req.Clone(req.Context())
	r.Header.Set("Content-Type", w.FormDataContentType())
	r.ContentLength = int64(len(body))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r, asked, nil
}

// formField is one field of a multipart form.
type formField struct{ name, value string }

// form is a multipart form's fields, in order.
type form []formField

func (f form) get(name string) string {
	for _, x := range f {
		if x.name == name {
			return x.value
		}
	}
	return ""
}

func (f *form) set(name, value string) {
	for i := range *f {
		if (*f)[i].name == name {
			(*f)[i].value = value
			return
		}
	}
	*f = append(*f, formField{name, value})
}

// formFields reads the fields of req's multipart body, which withLength
// has read ahead.
func formFields(req *http.Request) (form, error) {
	if req.GetBody == nil {
		return nil, errors.New("the request body was not read ahead")
	}
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(body, params["boundary"])
	var out form
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := io.ReadAll(io.LimitReader(part, sendAheadLimit))
		if err != nil {
			return nil, err
		}
		out = append(out, formField{part.FormName(), string(v)})
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
