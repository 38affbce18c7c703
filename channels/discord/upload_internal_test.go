package discord

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// The form reads the file only as the request reads the form, and its
// declared length is exactly what it yields.
func TestUploadFormStreamsTheFile(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB
	content := &countingReader{r: bytes.NewReader(data)}
	f := &channels.File{Name: "a\"b\\c\r\n.bin", Type: "application/pdf", Size: int64(len(data))}
	form, err := newUploadForm([]byte(`{"content":"hi"}`), f, content)
	if err != nil {
		t.Fatal(err)
	}
	if content.n != 0 {
		t.Fatalf("building the form read %d bytes of the file", content.n)
	}
	body, err := io.ReadAll(form.body)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(body)) != form.length {
		t.Errorf("form yields %d bytes, declares %d", len(body), form.length)
	}
	_, params, err := mime.ParseMediaType(form.contentType)
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	p, err := r.NextPart()
	if err != nil || p.FormName() != "payload_json" {
		t.Fatalf("first part %v, %v; want payload_json", p, err)
	}
	if got, _ := io.ReadAll(p); string(got) != `{"content":"hi"}` {
		t.Errorf("payload_json = %q", got)
	}
	p, err = r.NextPart()
	if err != nil || p.FormName() != "files[0]" || p.FileName() != `a"b\c.bin` || p.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("second part %+v, %v", p, err)
	}
	if got, _ := io.ReadAll(p); !bytes.Equal(got, data) {
		t.Errorf("file part holds %d bytes, want the %d of the file", len(got), len(data))
	}
	if _, err := r.NextPart(); err != io.EOF {
		t.Errorf("after the file: %v, want the end", err)
	}
}

func TestExactReader(t *testing.T) {
	for _, c := range []struct {
		data string
		size int64
		ok   bool
	}{
		{"hello", 5, true},
		{"", 0, true},
		{"hello", 3, false},
		{"hi", 5, false},
	} {
		got, err := io.ReadAll(&exactReader{r: strings.NewReader(c.data), left: c.size})
		if c.ok && (err != nil || string(got) != c.data) {
			t.Errorf("%q as %d bytes: %q, %v", c.data, c.size, got, err)
		}
		if !c.ok && !errors.Is(err, errSizeChanged) {
			t.Errorf("%q as %d bytes: err %v, want errSizeChanged", c.data, c.size, err)
		}
	}
}
