package discordtest

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// RouteCDN names attachment downloads from the fake's CDN for Fail,
// FailWith and Requests.
const RouteCDN = "GET /attachments/{channel}/{attachment}/{filename}"

// MaxUpload is the largest file Discord takes from a bot in a server
// without boosts (10 MiB); a larger one is refused with 413.
const MaxUpload = 10 << 20

// maxFiles is how many files one message may carry.
const maxFiles = 10

// File is a file on a message: attached by a person to an incoming
// message (served by the fake's CDN), or uploaded by the bot.
type File struct {
	// ID is the attachment id; the server sets it.
	ID string
	// Name is the file name.
	Name string
	// ContentType is the declared MIME type ("" for none).
	ContentType string
	// Data is the content: what the CDN serves, or exactly the bytes the
	// bot uploaded.
	Data []byte
	// Size is the size the message declares; 0 means len(Data).
	Size int
	// URL is where the message says the file is. Empty on an incoming
	// file means the fake's own CDN (under URL()); set it to point a
	// message at another host.
	URL string
}

// CDNRequest is one download from the fake's CDN.
type CDNRequest struct {
	Path string
	// Authorization is the header the client sent: a CDN link is signed,
	// so a client has no reason to send its bot token along.
	Authorization string
}

// CDNRequests returns the downloads the fake's CDN served or refused,
// oldest first.
func (s *Server) CDNRequests() []CDNRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CDNRequest(nil), s.cdnRequests...)
}

// storeFilesLocked gives files ids and CDN URLs under messageID in
// channelID and makes the CDN serve them. Files with a URL of their own
// keep it and are not served. s.mu must be held.
func (s *Server) storeFilesLocked(channelID, messageID string, files []File) []File {
	out := make([]File, len(files))
	for i, f := range files {
		f.ID = s.newIDLocked()
		if f.Size == 0 {
			f.Size = len(f.Data)
		}
		if f.URL == "" {
			p := "/attachments/" + channelID + "/" + f.ID + "/" + url.PathEscape(f.Name)
			s.cdn[p] = f.Data
			f.URL = s.srv.URL + p + "?ex=1&is=2&hm=signed"
		}
		out[i] = f
	}
	return out
}

// attachmentObjects renders files as Discord's attachment objects.
func attachmentObjects(files []File) []any {
	out := []any{}
	for _, f := range files {
		obj := map[string]any{"id": f.ID, "filename": f.Name, "size": f.Size, "url": f.URL, "proxy_url": f.URL}
		if f.ContentType != "" {
			obj["content_type"] = f.ContentType
		}
		out = append(out, obj)
	}
	return out
}

// getAttachment serves a file from the fake's CDN.
func (s *Server) getAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, ok := s.cdn[r.URL.EscapedPath()]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

// recordCDN wraps the CDN route: it records each download before the
// route counts it and serves it or a failure.
func (s *Server) recordCDN(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.cdnRequests = append(s.cdnRequests, CDNRequest{Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
		s.mu.Unlock()
		h(w, r)
	}
}

// uploadedFiles reads the files[n] parts of a multipart message create:
// the exact bytes, name and type of each. A file over MaxUpload is an
// error Discord answers with 413.
func uploadedFiles(form *multipart.Form) ([]File, *uploadError) {
	var out []File
	for i := range maxFiles + 1 {
		heads := form.File[fmt.Sprintf("files[%d]", i)]
		if len(heads) == 0 {
			continue
		}
		if i == maxFiles {
			return nil, &uploadError{http.StatusBadRequest, 50035, "Invalid Form Body: too many files"}
		}
		fh := heads[0]
		if fh.Size > MaxUpload {
			return nil, &uploadError{http.StatusRequestEntityTooLarge, 40005, "Request entity too large"}
		}
		f, err := fh.Open()
		if err != nil {
			return nil, &uploadError{http.StatusBadRequest, 50035, "Invalid Form Body: " + err.Error()}
		}
		data, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			return nil, &uploadError{http.StatusBadRequest, 50035, "Invalid Form Body: " + err.Error()}
		}
		out = append(out, File{Name: fh.Filename, ContentType: fh.Header.Get("Content-Type"), Data: data})
	}
	for name := range form.File {
		if !strings.HasPrefix(name, "files[") {
			return nil, &uploadError{http.StatusBadRequest, 50035, "Invalid Form Body: unknown file field " + name}
		}
	}
	return out, nil
}

// uploadError is a refused upload: status, Discord's code and message.
type uploadError struct {
	status, code int
	msg          string
}

func (e *uploadError) Error() string { return e.msg }
