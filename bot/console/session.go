package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"net/http"
	"strings"
	"time"
)

// sessionCookie names the cookie that carries the session id.
const sessionCookie = "sb_console"

// tokenEncoding writes tokens in lower-case base32: safe in a URL, a
// cookie and Markdown alike, and not the long hex run the secret scrubber
// takes for a credential (which would redact the link from the chat).
var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// randomToken returns 32 random bytes, encoded (52 characters).
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return strings.ToLower(tokenEncoding.EncodeToString(b))
}

// hashToken is what the store keeps of a token or session id.
func hashToken(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

// sessionKey carries the request's session in its context.
type sessionKey struct{}

// current is the session of a request that passed authed.
func current(r *http.Request) Session {
	s, _ := r.Context().Value(sessionKey{}).(Session)
	return s
}

// startSession stores a new session for identity and sets its cookie.
func (c *Console) startSession(ctx context.Context, w http.ResponseWriter, identity, via string) error {
	id := randomToken()
	dctx, cancel := durable(ctx)
	defer cancel()
	err := c.o.Store.CreateSession(dctx, NewSession{IDHash: hashToken(id), Identity: identity, CSRF: randomToken(),
		Idle: SessionIdle, Lifetime: SessionLifetime, Via: via})
	if err != nil {
		return err
	}
	c.log.Info("console login", "identity", identity, "via", via)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/admin", HttpOnly: true, Secure: c.secure(),
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionLifetime / time.Second)})
	return nil
}

// clearSession tells the browser to forget its session cookie.
func (c *Console) clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/admin", HttpOnly: true, Secure: c.secure(),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// authed lets through requests of a live session; a state-changing one
// must also carry the session's CSRF token. With touch, the request counts
// as activity (the live poll of an open page does not, so a forgotten tab
// still times out).
func (c *Console) authed(touch bool, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		var s Session
		if err == nil && ck.Value != "" {
			s, err = c.o.Store.Session(r.Context(), hashToken(ck.Value), SessionIdle, touch)
			if err == nil && !c.isAdmin(s.Identity) {
				err = ErrNoSession
			}
		} else {
			err = ErrNoSession
		}
		switch {
		case errors.Is(err, ErrNoSession):
			c.clearSession(w)
			if r.Method == http.MethodGet && touch {
				http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
				return
			}
			c.render(w, r, http.StatusUnauthorized, "error", page{Title: "Logged out",
				Error: "Your console session has ended; send /login to the bot in a direct message for a new link."})
			return
		case err != nil:
			c.log.Error("console: read session", "err", err)
			c.render(w, r, http.StatusServiceUnavailable, "error", page{Title: "Unavailable",
				Error: "The console cannot reach its storage right now; reload in a moment."})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !csrfOK(r, s.CSRF) {
			c.log.Warn("console request without the right CSRF token", "path", r.URL.Path, "identity", s.Identity)
			c.render(w, r, http.StatusForbidden, "error", page{Title: "Refused", Session: s,
				Error: "This request did not carry the page's security token, so nothing was changed. Reload the page and try again."})
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	})
}
