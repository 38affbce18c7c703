// Package console is the admin console: web pages under /admin for what
// does not fit in a chat — the approvals waiting (decided there with the
// same durable vote as a button press), the audit log, the conversations
// with their tool steps and approvals, the scheduled jobs and their runs
// (pause, resume, run now), the model usage per day (an SVG chart drawn on
// the server), each agent's effective tools, access requests and
// revocations, and the state of the replicas and their dependencies.
//
// Nobody types a password. An admin sends /login to the bot in a direct
// message and gets a one-time link (http.public_url + /admin/login?t=…,
// stored only as a SHA-256 hash, valid ten minutes, usable once); opening
// it starts a session whose cookie is HttpOnly, SameSite=Strict, limited
// to /admin, Secure behind https, with an idle and an absolute expiry.
// /logout ends every session of that admin. The http.admin_token logs in
// too, for automation. Every state-changing request carries the session's
// CSRF token; every response sets a strict Content-Security-Policy; pages
// are html/template, so text from chats is always escaped.
//
// The package owns its types and the Store it needs (storage/postgres
// implements it), reads and decides through bot/admin's interfaces, and
// registers /login and /logout with the pipeline; cmd/switchboard wires it
// and mounts Handler on the daemon's HTTP server.
package console
