// Package admin is the admin API: JSON under /api/v1 for operators and
// scripts (docs/admin-api.md). Every request carries Authorization: Bearer
// <http.admin_token>; without the right token it is 401 and nothing
// happens. A decision made through it is recorded as made by APIActor.
//
// The API owns no state: it reads and decides through the small
// interfaces it declares (Approvals, AccessRequests, AccessDecisions,
// Agents, Sessions, Grants, CustomTools) and the listers of Options, which
// the features and stores implement, so it depends on no concrete service.
// A part left nil answers 404.
//
// cmd/switchboard builds it with NewAPI and mounts it on the daemon's HTTP
// server (bot.HTTPOptions.Admin). Imports flow one way: admin imports bot,
// bot/customtools and tools' families; bot never imports admin.
package admin
