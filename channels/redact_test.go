package channels

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	base := errors.Join(io.EOF, errors.New("GET https://api/botSECRET123/getMe failed"))
	got := Redact(base, "", "SECRET123")
	if got.Error() == base.Error() || errors.Unwrap(got) == nil {
		t.Fatalf("Redact = %v", got)
	}
	if !errors.Is(got, io.EOF) {
		t.Fatal("redacted error no longer matches errors.Is")
	}
	for _, s := range []string{"SECRET123"} {
		if contains(got.Error(), s) {
			t.Fatalf("secret left in %q", got.Error())
		}
	}
	if Redact(io.EOF, "SECRET123") != io.EOF || Redact(nil, "x") != nil {
		t.Fatal("errors without secrets must come back unchanged")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
