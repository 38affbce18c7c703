package slacktest_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func TestDownloadNeedsTheBotToken(t *testing.T) {
	fake := slacktest.NewServer("xoxb-good", "xapp-good")
	defer fake.Close()
	body := []byte("secret log")
	link := fake.AddFile(slacktest.SharedFile{Name: "a.log", Mimetype: "text/plain", Body: body})["url_private_download"].(string)

	for token, want := range map[string]int{"": http.StatusUnauthorized, "xoxb-bad": http.StatusUnauthorized, "xoxb-good": http.StatusOK} {
		req, _ := http.NewRequestWithContext(ctx(t), http.MethodGet, link, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: status %d, want %d", token, resp.StatusCode, want)
		}
		if want == http.StatusOK && !bytes.Equal(got, body) {
			t.Errorf("download = %q, want %q", got, body)
		}
	}
	if n := fake.Requests(slacktest.Download); n != 3 {
		t.Errorf("%d downloads counted, want 3", n)
	}
}

// slack-go's own upload v2 lands in the fake's records.
func TestUploadV2(t *testing.T) {
	fake := slacktest.NewServer("xoxb-good", "xapp-good")
	defer fake.Close()
	api := slack.New("xoxb-good", slack.OptionAPIURL(fake.URL()))
	body := []byte("hello, file")
	f, err := api.UploadFileContext(ctx(t), slack.UploadFileParameters{Reader: bytes.NewReader(body), FileSize: len(body),
		Filename: "hello.txt", Title: "Hello", Channel: "C0GEN", ThreadTimestamp: "1700000000.000100", InitialComment: "for you"})
	if err != nil {
		t.Fatalf("UploadFileContext: %v", err)
	}
	ups := fake.Uploads("C0GEN")
	if len(ups) != 1 {
		t.Fatalf("uploads = %+v", ups)
	}
	up := ups[0]
	if up.FileID != f.ID || !bytes.Equal(up.Body, body) || up.Filename != "hello.txt" || up.Title != "Hello" ||
		up.ThreadTS != "1700000000.000100" || up.Comment != "for you" || up.TS == "" {
		t.Errorf("upload = %+v", up)
	}
	if msgs := fake.Posted("C0GEN", "files.completeUploadExternal"); len(msgs) != 1 || msgs[0].TS != up.TS {
		t.Errorf("messages = %+v", msgs)
	}
	info, _, _, err := api.GetFileInfoContext(ctx(t), f.ID, 1, 1)
	if err != nil || len(info.Shares.Public["C0GEN"]) != 1 || info.Shares.Public["C0GEN"][0].Ts != up.TS {
		t.Errorf("files.info = %+v, %v; want the share's ts %s", info, err, up.TS)
	}

	// An upload of other than the announced length is refused.
	u, err := api.GetUploadURLExternalContext(ctx(t), slack.GetUploadURLExternalParameters{FileName: "x", FileSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.UploadToURL(ctx(t), slack.UploadToURLParameters{UploadURL: u.UploadURL, Filename: "x", Content: "abc"}); err == nil {
		t.Error("an upload shorter than announced was taken")
	}
	if _, err := api.CompleteUploadExternalContext(ctx(t), slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C0GEN"}); err == nil {
		t.Error("a file never uploaded was shared")
	}
}
