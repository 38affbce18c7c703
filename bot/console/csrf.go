package console

import (
	"crypto/subtle"
	"net/http"
)

// csrfField and csrfHeader carry the CSRF token: the field in forms, the
// header in the script's requests.
const (
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// csrfOK reports whether r carries want, the session's synchronizer
// token, compared in constant time. An empty want never matches.
func csrfOK(r *http.Request, want string) bool {
	got := r.Header.Get(csrfHeader)
	if got == "" {
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		got = r.PostFormValue(csrfField)
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
