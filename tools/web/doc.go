// Package web is the web tool family: web_fetch, which reads a page as
// Markdown, and web_search. Every fetch goes through the SSRF guard
// (ssrf.go), which refuses private, loopback and link-local addresses at
// the moment of dialing, so a redirect or a DNS answer cannot lead inside.
package web
