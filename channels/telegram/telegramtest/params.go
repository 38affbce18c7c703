package telegramtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
)

// maxBody bounds a request body, like Telegram's own limits do.
const maxBody = 10 << 20

// params are a call's parameters as text: strings as they are, numbers and
// booleans as written, objects and arrays as JSON.
type params map[string]string

// parseParams reads parameters from the query string and from a
// multipart/form-data, application/json or urlencoded body.
func parseParams(r *http.Request) (params, error) {
	p := params{}
	for k, v := range r.URL.Query() {
		p[k] = v[0]
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	mediaType, mp, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mediaType = "application/json"
	}
	switch mediaType {
	case "multipart/form-data":
		return p, readMultipart(p, body, mp["boundary"])
	case "application/x-www-form-urlencoded":
		vs, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("parse form: %w", err)
		}
		for k, v := range vs {
			p[k] = v[0]
		}
		return p, nil
	default:
		return p, readJSON(p, body)
	}
}

func readMultipart(p params, body []byte, boundary string) error {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("parse multipart: %w", err)
		}
		v, err := io.ReadAll(part)
		if err != nil {
			return fmt.Errorf("read multipart field %q: %w", part.FormName(), err)
		}
		p[part.FormName()] = string(v)
	}
}

func readJSON(p params, body []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return fmt.Errorf("parse JSON body: %w", err)
	}
	for k, raw := range fields {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			p[k] = s
		} else if string(raw) != "null" {
			p[k] = string(raw)
		}
	}
	return nil
}

// int64 returns an integer parameter, 0 when it is absent.
func (p params) int64(name string) (int64, *apiError) {
	v, ok := p[name]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("invalid " + name + " specified")
	}
	return n, nil
}

// int returns an integer parameter, 0 when it is absent.
func (p params) int(name string) (int, *apiError) {
	n, err := p.int64(name)
	return int(n), err
}

// bool returns a boolean parameter, false when it is absent.
func (p params) bool(name string) bool {
	b, _ := strconv.ParseBool(p[name])
	return b
}

// json decodes a JSON parameter into dst; absent leaves dst untouched.
func (p params) json(name string, dst any) *apiError {
	v, ok := p[name]
	if !ok || v == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(v), dst); err != nil {
		return badRequest("can't parse " + name + " JSON object")
	}
	return nil
}

// chatID returns the required chat_id parameter. Only numeric ids are
// known to the fake; @usernames are "chat not found".
func (p params) chatID() (int64, *apiError) {
	v := p["chat_id"]
	if v == "" {
		return 0, badRequest("chat_id is empty")
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("chat not found")
	}
	return id, nil
}
