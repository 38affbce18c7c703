package telegramtest

import (
	"net/http"
	"strconv"
	"strings"
)

// storedFile is a file AddFile registered: where getFile says it is and
// what its download returns.
type storedFile struct {
	path string
	body []byte
}

// AddFile registers a file under id: getFile with that file_id answers a
// file_path ending in name, and GET /file/bot<token>/<file_path> returns
// body. A file id not registered is answered 400, as Telegram answers an
// invalid one.
func (s *Server) AddFile(id, name string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]storedFile{}
	}
	path := "files/" + strconv.Itoa(len(s.files)) + "/" + name
	s.files[id] = storedFile{path: path, body: append([]byte(nil), body...)}
}

// getFile serves getFile for files AddFile registered.
func (s *Server) getFile(p params) (any, *apiError) {
	id := p["file_id"]
	s.mu.Lock()
	f, ok := s.files[id]
	s.mu.Unlock()
	if !ok {
		return nil, badRequest("invalid file_id")
	}
	return map[string]any{
		"file_id": id, "file_unique_id": "u" + id, "file_size": len(f.body), "file_path": f.path,
	}, nil
}

// serveFile serves GET /file/bot<token>/<file_path>, counted by Requests
// as method "file"; Fail("file", ...) makes downloads fail.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	s.mu.Lock()
	s.requests["file"]++
	s.notifyLocked()
	offline := s.offline
	var body []byte
	found := false
	token, path, ok := strings.Cut(rest, "/")
	if ok && token == s.token {
		for _, f := range s.files {
			if f.path == path {
				body, found = f.body, true
				break
			}
		}
	}
	s.mu.Unlock()
	f := s.takeFailure("file")
	switch {
	case offline:
		dropConnection(w)
	case f != nil:
		writeError(w, f)
	case r.Method != http.MethodGet:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case !found:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

// Media is a file a user sends with a message. Its Kind is the message
// field it goes in; a photo also gets a small preview size, listed first
// as Telegram lists sizes smallest first, under FileID+"-small".
type Media struct {
	Kind     string // "photo", "document", "voice", "audio", "video" or "video_note"
	FileID   string // the id AddFile registered, for a download
	FileName string // document, audio and video only
	MimeType string // not for photo and video_note
	Size     int64  // file_size
}

// Fields returns the message fields that carry m, for Incoming.Extra (with
// a caption or a media_group_id added, say).
func (m Media) Fields() map[string]any {
	f := map[string]any{"file_id": m.FileID, "file_unique_id": "u" + m.FileID, "file_size": m.Size}
	if m.FileName != "" {
		f["file_name"] = m.FileName
	}
	if m.MimeType != "" {
		f["mime_type"] = m.MimeType
	}
	switch m.Kind {
	case "photo":
		small := map[string]any{"file_id": m.FileID + "-small", "file_unique_id": "u" + m.FileID + "-small",
			"file_size": 100, "width": 90, "height": 60}
		f["width"], f["height"] = 1280, 853
		return map[string]any{"photo": []any{small, f}}
	case "voice", "audio":
		f["duration"] = 3
	case "video":
		f["width"], f["height"], f["duration"] = 640, 360, 3
	case "video_note":
		f["length"], f["duration"] = 240, 3
	}
	return map[string]any{m.Kind: f}
}

// SendMedia delivers a message from user userID in chat chatID (private
// when chatID is positive) carrying m with caption (none when empty), and
// returns the update id.
func (s *Server) SendMedia(chatID, userID int64, caption string, m Media) (updateID int64) {
	extra := m.Fields()
	if caption != "" {
		extra["caption"] = caption
	}
	id, _ := s.PushMessage(Incoming{ChatID: chatID, UserID: userID, Extra: extra})
	return id
}
