package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
)

// uploadTimeout bounds one upload attempt, body included: a 10 MiB file
// takes minutes only on a very slow link.
const uploadTimeout = 5 * time.Minute

// maxAnswer is the most of Discord's answer to an upload that is read.
const maxAnswer = 1 << 20

// uploadClient sends files over transport. It follows no redirect: the
// API never redirects a message create, and the bot token must not travel.
func uploadClient(transport http.RoundTripper) *http.Client {
	return &http.Client{
		Transport:     transport,
		Timeout:       uploadTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkFile refuses a file Send cannot attach, before any of it is read.
func (c *Channel) checkFile(f *channels.File) error {
	if f.Open == nil {
		return fmt.Errorf("file %q has nothing to read: %w", f.Name, channels.ErrPermanent)
	}
	if f.Size < 0 || f.Size > c.opts.MaxFileBytes {
		return &channels.FileTooLargeError{Platform: Platform, Name: f.Name, Size: f.Size, Limit: c.opts.MaxFileBytes}
	}
	return nil
}

// sendFile sends one message with f attached (multipart: payload_json,
// then files[0]), waiting out short rate limits; each attempt opens f
// anew. The nonce works as in sendMessage.
//
// discordgo's ChannelMessageSendComplex builds the whole multipart body in
// memory (MultipartBodyWithJSON into a bytes.Buffer), so a file would be
// held whole, and twice while the buffer grows. This streams it instead,
// with a Content-Length, through the same rate limiter buckets.
func (c *Channel) sendFile(ctx context.Context, channelID string, data *discordgo.MessageSend, nonce string, f *channels.File) (*discordgo.Message, error) {
	payload, err := json.Marshal(nonceSend{MessageSend: data, Nonce: nonce, EnforceNonce: nonce != ""})
	if err != nil {
		return nil, fmt.Errorf("encode the message: %w", err)
	}
	var m *discordgo.Message
	err = c.withRetry(ctx, func(ctx context.Context) error {
		var err error
		m, err = c.uploadOnce(ctx, channelID, payload, f)
		return err
	})
	return m, err
}

// uploadOnce makes one message create request carrying f.
func (c *Channel) uploadOnce(ctx context.Context, channelID string, payload []byte, f *channels.File) (*discordgo.Message, error) {
	content, err := f.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s to send it: %w", f.Name, err)
	}
	defer content.Close()
	form, err := newUploadForm(payload, f, content)
	if err != nil {
		return nil, err
	}
	endpoint := discordgo.EndpointChannelMessages(channelID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, form.body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = form.length
	req.Header.Set("Authorization", c.sess.Token)
	req.Header.Set("Content-Type", form.contentType)
	req.Header.Set("User-Agent", c.sess.UserAgent)
	bucket := c.sess.Ratelimiter.LockBucket(endpoint)
	resp, err := c.uploads.Do(req)
	if err != nil {
		_ = bucket.Release(nil)
		return nil, err
	}
	defer resp.Body.Close()
	if err := bucket.Release(resp.Header); err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("read Discord's answer: %w", err)
	}
	return decodeAnswer(req, resp, answer)
}

// decodeAnswer turns Discord's answer to a message create into the message,
// or into the errors discordgo returns for the same answers, so withRetry
// and classify treat an upload like any other send.
func decodeAnswer(req *http.Request, resp *http.Response, answer []byte) (*discordgo.Message, error) {
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated:
		m := new(discordgo.Message)
		if err := json.Unmarshal(answer, m); err != nil {
			return nil, fmt.Errorf("decode the sent message: %w", err)
		}
		return m, nil
	case http.StatusTooManyRequests:
		var limit discordgo.TooManyRequests
		if err := json.Unmarshal(answer, &limit); err != nil || limit.RetryAfter <= 0 {
			limit.RetryAfter = channels.LastRetryAfter(resp.Header)
		}
		return nil, &discordgo.RateLimitError{RateLimit: &discordgo.RateLimit{TooManyRequests: &limit, URL: req.URL.Path}}
	}
	rest := &discordgo.RESTError{Request: req, Response: resp, ResponseBody: answer}
	var msg discordgo.APIErrorMessage
	if json.Unmarshal(answer, &msg) == nil {
		rest.Message = &msg
	}
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		return nil, fmt.Errorf("Discord refused the file as too large for this channel: %w: %w", channels.ErrPermanent, rest)
	}
	return nil, rest
}

// uploadForm is a multipart message create whose file part streams.
type uploadForm struct {
	contentType string
	length      int64 // exact, so the request is not sent chunked
	body        io.Reader
}

// newUploadForm lays out payload_json and files[0] around content, which
// it does not read: the request reads it as it goes out.
func newUploadForm(payload []byte, f *channels.File, content io.Reader) (uploadForm, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="payload_json"`)
	h.Set("Content-Type", "application/json")
	p, err := w.CreatePart(h)
	if err != nil {
		return uploadForm{}, err
	}
	if _, err := p.Write(payload); err != nil {
		return uploadForm{}, err
	}
	// Quoted like a browser (and discordgo) quotes it; the name is safe
	// already, so dropping line breaks only guards the header.
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "")
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files[0]"; filename="`+quote.Replace(f.Name)+`"`)
	h.Set("Content-Type", orDefault(f.Type, "application/octet-stream"))
	if _, err := w.CreatePart(h); err != nil {
		return uploadForm{}, err
	}
	headLen := buf.Len()
	if err := w.Close(); err != nil { // writes the closing boundary after the head
		return uploadForm{}, err
	}
	all := buf.Bytes()
	return uploadForm{
		contentType: w.FormDataContentType(),
		length:      int64(len(all)) + f.Size,
		body:        io.MultiReader(bytes.NewReader(all[:headLen]), &exactReader{r: content, left: f.Size}, bytes.NewReader(all[headLen:])),
	}, nil
}

// orDefault is s, or fallback when s is empty.
func orDefault(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// errSizeChanged fails an upload whose file is not the size it was said to
// be: the request's length is fixed before the file is read.
var errSizeChanged = errors.New("the file's length differs from its recorded size; it changed after it was stored")

// exactReader reads exactly left bytes from r, failing when r ends sooner
// or has more.
type exactReader struct {
	r    io.Reader
	left int64
}

// Read implements io.Reader.
func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		var one [1]byte
		n, err := io.ReadFull(e.r, one[:])
		switch {
		case n > 0:
			return 0, errSizeChanged
		case err != nil && !errors.Is(err, io.EOF):
			return 0, err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if e.left > 0 {
			return n, errSizeChanged
		}
		err = nil
	}
	return n, err
}
