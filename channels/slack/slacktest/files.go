package slacktest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// Paths the fake serves files on, like files.slack.com's.
const (
	downloadPath = "/files-pri/"
	uploadPath   = "/upload/v1/"
)

// Methods counted by Requests besides the Web API's: a file download and
// a POST of bytes to an upload URL.
const (
	Download = "download"
	Upload   = "upload"
)

// SharedFile is a file a person shared, served by the fake at its
// url_private_download to requests carrying the bot token.
type SharedFile struct {
	Name     string
	Mimetype string
	Filetype string
	Subtype  string // "slack_audio" for a voice clip
	Body     []byte
	// RedirectTo, when set, makes the download answer 302 to this URL.
	RedirectTo string
	// ContentType is the download's Content-Type; default Mimetype.
	ContentType string
}

// Uploaded is one file uploaded with upload v2: what the upload URL
// received and what files.completeUploadExternal shared it with.
type Uploaded struct {
	FileID   string
	Filename string // files.getUploadURLExternal's filename
	Length   int    // files.getUploadURLExternal's length
	Body     []byte // the bytes POSTed to the upload URL
	Auth     string // the upload POST's Authorization header
	Title    string // files.completeUploadExternal's title
	Channel  string // channel_id
	ThreadTS string
	Comment  string // initial_comment
	TS       string // the ts of the message sharing the file
}

// fileState is the files side of the fake, guarded by Server.mu.
type fileState struct {
	seq      int
	shared   map[string]SharedFile // file id → file people shared
	uploads  map[string]*Uploaded  // file id → upload, from getUploadURLExternal on
	complete []*Uploaded           // shared uploads, in order
}

func (fs *fileState) init() {
	fs.shared = map[string]SharedFile{}
	fs.uploads = map[string]*Uploaded{}
}

// AddFile registers f and returns the file object a message event carries
// for it (see Msg.Files), with its url_private_download on the fake.
func (s *Server) AddFile(f SharedFile) map[string]any {
	s.mu.Lock()
	s.files.seq++
	id := fmt.Sprintf("F%08d", s.files.seq)
	s.files.shared[id] = f
	s.mu.Unlock()
	base := s.URL() + strings.TrimPrefix(downloadPath, "/") + TeamID + "-" + id
	obj := map[string]any{"id": id, "name": f.Name, "title": f.Name, "mimetype": f.Mimetype, "filetype": f.Filetype,
		"size": len(f.Body), "mode": "hosted", "url_private": base + "/" + url.PathEscape(f.Name),
		"url_private_download": base + "/download/" + url.PathEscape(f.Name)}
	if f.Subtype != "" {
		obj["subtype"] = f.Subtype
	}
	return obj
}

// serveDownload serves a shared file: 401 without the bot token, scripted
// failures (Fail/RateLimit of Download) first.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[Download]++
	s.notify()
	fail := s.nextFailure(Download)
	id, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, downloadPath), TeamID+"-"), "/")
	f, ok := s.files.shared[id]
	s.mu.Unlock()
	switch {
	case writeFailure(w, fail):
	case r.Header.Get("Authorization") != "Bearer "+s.botToken:
		http.Error(w, "not authed", http.StatusUnauthorized)
	case !ok:
		http.NotFound(w, r)
	case f.RedirectTo != "":
		http.Redirect(w, r, f.RedirectTo, http.StatusFound)
	default:
		w.Header().Set("Content-Type", cmp.Or(f.ContentType, f.Mimetype, "application/octet-stream"))
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Body)))
		_, _ = w.Write(f.Body)
	}
}

func (s *Server) getUploadURL(v url.Values) (any, error) {
	length, err := strconv.Atoi(v.Get("length"))
	if v.Get("filename") == "" || err != nil || length <= 0 {
		return nil, slackError("invalid_arguments")
	}
	s.mu.Lock()
	s.files.seq++
	id := fmt.Sprintf("F%08d", s.files.seq)
	s.files.uploads[id] = &Uploaded{FileID: id, Filename: v.Get("filename"), Length: length}
	s.mu.Unlock()
	return map[string]any{"ok": true, "file_id": id,
		"upload_url": s.URL() + strings.TrimPrefix(uploadPath, "/") + id}, nil
}

// serveUpload takes the bytes of an upload, as a multipart "file" field
// or a raw body; they must be exactly the length announced.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[Upload]++
	s.notify()
	fail := s.nextFailure(Upload)
	up := s.files.uploads[strings.TrimPrefix(r.URL.Path, uploadPath)]
	var st *channeltest.Stall
	if up != nil && fail == nil {
		st = s.takeStallLocked()
	}
	s.mu.Unlock()
	if writeFailure(w, fail) {
		return
	}
	if r.Method != http.MethodPost || up == nil {
		http.NotFound(w, r)
		return
	}
	r.Body = readCloser{st.Reader(r.Context(), s.done, r.Body), r.Body}
	body, err := uploadBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) != up.Length {
		http.Error(w, fmt.Sprintf("got %d bytes, announced %d", len(body), up.Length), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	up.Body, up.Auth = body, r.Header.Get("Authorization")
	s.notify()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintf(w, "OK - %d", len(body))
}

// readCloser is a body read through a reader of it (a stall).
type readCloser struct {
	io.Reader
	io.Closer
}

// uploadBody reads the file of an upload request.
func uploadBody(r *http.Request) ([]byte, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return io.ReadAll(r.Body)
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("no file part: %w", err)
		}
		if p.FormName() == "file" {
			var b bytes.Buffer
			_, err := io.Copy(&b, p)
			return b.Bytes(), err
		}
	}
}

func (s *Server) completeUpload(v url.Values) (any, error) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if json.Unmarshal([]byte(v.Get("files")), &files) != nil || len(files) == 0 {
		return nil, slackError("invalid_arguments")
	}
	channel := v.Get("channel_id")
	if channel == "" || strings.HasPrefix(channel, "U") || strings.HasPrefix(channel, "W") {
		return nil, slackError("channel_not_found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]any, 0, len(files))
	for _, f := range files {
		up := s.files.uploads[f.ID]
		if up == nil || up.Body == nil {
			return nil, slackError("file_not_found")
		}
		s.seq++
		up.Title, up.Channel, up.ThreadTS, up.Comment = f.Title, channel, v.Get("thread_ts"), v.Get("initial_comment")
		up.TS = fmt.Sprintf("%d.%06d", time.Now().Unix(), s.seq)
		s.files.complete = append(s.files.complete, up)
		s.messages = append(s.messages, Message{Method: "files.completeUploadExternal", Channel: channel,
			TS: up.TS, ThreadTS: up.ThreadTS, Text: up.Comment, NoBlocks: true})
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	s.notify()
	return map[string]any{"ok": true, "files": out}, nil
}

// filesInfo reports an uploaded file and where it was shared.
func (s *Server) filesInfo(v url.Values) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	up := s.files.uploads[v.Get("file")]
	if up == nil {
		return nil, slackError("file_not_found")
	}
	file := map[string]any{"id": up.FileID, "name": up.Filename, "title": up.Title, "size": len(up.Body)}
	if up.TS != "" {
		kind := "private"
		if strings.HasPrefix(up.Channel, "C") {
			kind = "public"
		}
		file["shares"] = map[string]any{kind: map[string]any{up.Channel: []any{
			map[string]any{"ts": up.TS, "thread_ts": up.ThreadTS}}}}
	}
	return map[string]any{"ok": true, "file": file}, nil
}

// Uploads returns the files shared in channel, in order.
func (s *Server) Uploads(channel string) []Uploaded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Uploaded
	for _, up := range s.files.complete {
		if up.Channel == channel {
			out = append(out, *up)
		}
	}
	return out
}
