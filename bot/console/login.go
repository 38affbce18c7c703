package console

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// loginCookie carries the login form's own CSRF token (a double-submit
// cookie: there is no session yet to tie it to), so no other site can
// post a login into this browser.
const loginCookie = "sb_console_login"

// loginPage shows the login page: with ?t= a button that uses the link
// (opening the link alone uses nothing, so a chat's link preview cannot
// spend it), without it how to get one and, when set up, the admin token
// form.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: "/admin/login", HttpOnly: true, Secure: c.secure(),
		SameSite: http.SameSiteStrictMode, MaxAge: int(LinkTTL.Seconds())})
	p := page{Title: "Log in", LoginCSRF: tok, Link: r.URL.Query().Get("t"), TokenLogin: c.o.AdminToken != ""}
	if r.URL.Query().Get("out") != "" {
		p.Notice = "You are logged out."
	}
	c.render(w, r, http.StatusOK, "login", p)
}

// login opens a session from a login link, the admin token in the form,
// or the admin token as a Bearer header (automation).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		// A header no other site can make a browser send: no CSRF token.
		c.loginWithToken(w, r, bearer)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	ck, err := r.Cookie(loginCookie)
	sent := r.PostFormValue("login_csrf")
	if err != nil || ck.Value == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(sent)) != 1 {
		c.log.Warn("console login without the login form's token", "remote", r.RemoteAddr)
		c.loginFailed(w, r, http.StatusForbidden, "", "The login form had expired, so nothing happened. Open your login link again.")
		return
	}
	if link := r.PostFormValue("t"); link != "" {
		c.loginWithLink(w, r, link)
		return
	}
	c.loginWithToken(w, r, r.PostFormValue("token"))
}

// loginWithLink uses a login link: once, unexpired, for an admin who is
// still one.
func (c *Console) loginWithLink(w http.ResponseWriter, r *http.Request, link string) {
	dctx, cancel := durable(r.Context())
	defer cancel()
	identity, err := c.o.Store.UseLoginLink(dctx, hashToken(link))
	switch {
	case errors.Is(err, ErrInvalidLink):
		c.log.Warn("console login with a link that is not valid", "remote", r.RemoteAddr) // never the link itself
		c.loginFailed(w, r, http.StatusForbidden, "", ErrInvalidLink.Error())
		return
	case err != nil:
		c.log.Error("console: use login link", "err", err)
		c.loginFailed(w, r, http.StatusServiceUnavailable, link, "Could not log you in (storage unavailable); press the button again in a moment.")
		return
	case !c.isAdmin(identity):
		c.log.Warn("console login link of someone no longer an admin", "identity", identity)
		c.loginFailed(w, r, http.StatusForbidden, "", identity+" is not an admin any more, so the link does not log in.")
		return
	}
	c.opened(w, r, identity, "link")
}

// loginWithToken logs in with http.admin_token, compared in constant time
// (of hashes, so not even the length leaks).
func (c *Console) loginWithToken(w http.ResponseWriter, r *http.Request, token string) {
	sum := sha256.Sum256([]byte(token))
	if c.o.AdminToken == "" || subtle.ConstantTimeCompare(sum[:], c.token[:]) != 1 {
		c.log.Warn("console login with a wrong admin token", "remote", r.RemoteAddr)
		c.loginFailed(w, r, http.StatusForbidden, "", "That is not the admin token (http.admin_token); nothing happened.")
		return
	}
	c.opened(w, r, TokenActor, "token")
}

// opened starts the session and goes to the console's first page.
func (c *Console) opened(w http.ResponseWriter, r *http.Request, identity, via string) {
	if err := c.startSession(r.Context(), w, identity, via); err != nil {
		c.log.Error("console: start session", "err", err)
		c.loginFailed(w, r, http.StatusServiceUnavailable, "", "Could not start your session (storage unavailable); try again in a moment.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: "/admin/login", MaxAge: -1})
	http.Redirect(w, r, "/admin/approvals", http.StatusSeeOther)
}

// loginFailed shows the login page again with why; link is kept when
// pressing again may work.
func (c *Console) loginFailed(w http.ResponseWriter, r *http.Request, code int, link, why string) {
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: "/admin/login", HttpOnly: true, Secure: c.secure(),
		SameSite: http.SameSiteStrictMode, MaxAge: int(LinkTTL.Seconds())})
	c.render(w, r, code, "login", page{Title: "Log in", Error: why, LoginCSRF: tok, Link: link, TokenLogin: c.o.AdminToken != ""})
}

// logout ends this browser's session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(sessionCookie); err == nil {
		dctx, cancel := durable(r.Context())
		defer cancel()
		if err := c.o.Store.EndSession(dctx, hashToken(ck.Value), current(r).Identity); err != nil {
			c.log.Error("console: end session", "err", err)
			c.render(w, r, http.StatusServiceUnavailable, "error", page{Title: "Unavailable", Session: current(r),
				Error: "Could not log you out (storage unavailable); try again in a moment."})
			return
		}
	}
	c.clearSession(w)
	http.Redirect(w, r, "/admin/login?out=1", http.StatusSeeOther)
}

// isAdmin reports whether identity may use the console now.
func (c *Console) isAdmin(identity string) bool {
	return identity == TokenActor || (c.o.IsAdmin != nil && c.o.IsAdmin(identity))
}
