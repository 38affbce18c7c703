package channels

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// maxFileRedirects is how many redirects one file transfer follows; the
// platforms' file hosts use one at most.
const maxFileRedirects = 5

// FileHosts says where an adapter may fetch or send file bytes. File links
// arrive in messages and API answers, and a request to them may carry the
// bot token, so every link and every redirect is checked against the
// platform's own hosts and nothing else is ever asked (deny by default).
type FileHosts struct {
	// Hosts are the platform's own file hosts, reached over https on the
	// default port only (compared without regard to case, as DNS does).
	Hosts []string
	// API, when set, is the configured API URL: links with its scheme and
	// host are allowed too. The fake serves files there in tests, and the
	// API gets the token with every call anyway. Leave it empty where the
	// production API host must not serve files.
	API string
	// Refused is the error of a redirect off these hosts; the adapter
	// returns it for a link off them too, so callers test one error.
	Refused error
	// Name begins the error of a transfer redirected too often
	// ("slack: file transfer").
	Name string
}

// Allows reports whether link may be fetched: an absolute URL without
// user info, https on one of Hosts or the scheme and host of API.
func (h FileHosts) Allows(link string) bool {
	u, err := url.Parse(link)
	if err != nil || u.User != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" {
		for _, host := range h.Hosts {
			if strings.EqualFold(u.Host, host) {
				return true
			}
		}
	}
	if h.API == "" {
		return false
	}
	api, err := url.Parse(h.API)
	return err == nil && api.Host != "" && u.Scheme == api.Scheme && strings.EqualFold(u.Host, api.Host)
}

// Client is an HTTP client for file transfers over rt. It has no overall
// timeout, since a large file takes long: callers bound each transfer
// with their context. A redirect off the allowed hosts fails with
// Refused before any request goes there, so the token never follows it.
func (h FileHosts) Client(rt http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxFileRedirects {
				return errors.New(h.Name + ": too many redirects")
			}
			if !h.Allows(req.URL.String()) {
				return h.Refused
			}
			return nil
		},
	}
}
