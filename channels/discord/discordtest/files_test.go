package discordtest

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"
)

// upload posts a multipart message create with one file to chanA.
func upload(t *testing.T, s *Server, payload, name, typ string, data []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("payload_json", payload)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files[0]"; filename="`+name+`"`)
	h.Set("Content-Type", typ)
	fw, _ := mw.CreatePart(h)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.URL()+"/api/v9/channels/"+chanA+"/messages", &buf)
	req.Header.Set("Authorization", "Bot tok")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return do(t, req)
}

func TestUploadedFilesAreRecordedAndServed(t *testing.T) {
	s := newServer(t)
	s.AddChannel(chanA, guild)
	data := []byte("\x00\x01 exact bytes \xff")
	status, body := upload(t, s, `{"content":""}`, "r.bin", "application/pdf", data)
	if status != 200 {
		t.Fatalf("upload without content: %d %v", status, body)
	}
	m := s.Messages(chanA)[0]
	if len(m.Files) != 1 || !bytes.Equal(m.Files[0].Data, data) || m.Files[0].Name != "r.bin" || m.Files[0].ContentType != "application/pdf" {
		t.Fatalf("recorded files = %+v", m.Files)
	}
	if m.ContentLength <= 0 {
		t.Errorf("ContentLength = %d, want the request's", m.ContentLength)
	}
	atts, _ := body["attachments"].([]any)
	if len(atts) != 1 {
		t.Fatalf("answer's attachments = %v", body["attachments"])
	}
	link, _ := atts[0].(map[string]any)["url"].(string)
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, data) {
		t.Errorf("CDN served %d %q, want the uploaded bytes", resp.StatusCode, got)
	}

	status, body = upload(t, s, `{"content":"big"}`, "big.bin", "", make([]byte, MaxUpload+1))
	if status != http.StatusRequestEntityTooLarge || code(body) != 40005 {
		t.Errorf("upload over MaxUpload: %d %v", status, body)
	}
	if n := len(s.Messages(chanA)); n != 1 {
		t.Errorf("%d messages after a refused upload", n)
	}
}

func TestIncomingFilesAreServedByTheCDN(t *testing.T) {
	s := newServer(t)
	data := []byte("log line\n")
	s.PushMessage(Incoming{ChannelID: chanA, GuildID: guild, UserID: user,
		Files: []File{{Name: "a b.log", ContentType: "text/plain", Data: data}, {Name: "x", URL: "https://elsewhere.example/x"}}})
	var in Message
	s.mu.Lock()
	for _, m := range s.messages {
		in = m.Message
	}
	s.mu.Unlock()
	if len(in.Files) != 2 || in.Files[1].URL != "https://elsewhere.example/x" || in.Files[0].Size != len(data) {
		t.Fatalf("incoming files = %+v", in.Files)
	}
	resp, err := http.Get(in.Files[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, data) {
		t.Errorf("CDN served %d %q", resp.StatusCode, got)
	}
	resp, err = http.Get(s.URL() + "/attachments/" + chanA + "/1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown file: %d, want 404", resp.StatusCode)
	}
	if reqs := s.CDNRequests(); len(reqs) != 2 || s.Requests(RouteCDN) != 2 {
		t.Errorf("CDN requests = %+v", reqs)
	}
}
