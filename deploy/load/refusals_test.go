package main

import (
	"net/http"
	"strings"
	"testing"
)

// refusal is a request a lean fake must refuse, and the status it must
// answer.
type refusal struct {
	path, contentType, body string
	want                    int
}

// wantRefused posts each case to the fake at base and wants its status,
// then every one of them counted by complaints.
func wantRefused(t *testing.T, base string, complaints func() (int, string), cases map[string]refusal) {
	t.Helper()
	for name, tc := range cases {
		resp, err := http.Post(base+tc.path, tc.contentType, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d", name, resp.StatusCode, tc.want)
		}
	}
	if n, why := complaints(); n != len(cases) || why == "" {
		t.Errorf("complaints = %d, %q; want %d and a reason", n, why, len(cases))
	}
}
