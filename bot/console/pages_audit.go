package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// auditPageSize is how many entries one audit page shows.
const auditPageSize = 50

// auditData is what the audit page shows.
type auditData struct {
	Filter       AuditFilter
	Since, Until string // as typed, shown back in the form
	Filtered     bool
	Entries      []AuditEntry
	Older        string // the next page's address, "" on the last
}

// timeLayouts are the forms the audit filter's times are read in (UTC).
var timeLayouts = []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// parseWhen reads a filter time; "" is no bound.
func parseWhen(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, true
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func (c *Console) auditPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := auditData{Since: q.Get("since"), Until: q.Get("until")}
	d.Filter = AuditFilter{Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")),
		Tool: strings.TrimSpace(q.Get("tool")), Outcome: strings.TrimSpace(q.Get("outcome")), Limit: auditPageSize + 1}
	p := page{Title: "Audit log", Nav: "audit", Session: current(r)}
	var okSince, okUntil bool
	d.Filter.Since, okSince = parseWhen(d.Since)
	d.Filter.Until, okUntil = parseWhen(d.Until)
	if !okSince || !okUntil {
		p.Error = "Times are UTC, written 2026-12-01, 2026-12-01T09:00 or RFC 3339; the filter was not applied."
		d.Filter.Since, d.Filter.Until = time.Time{}, time.Time{}
	}
	if b, err := strconv.ParseInt(q.Get("before"), 10, 64); err == nil && b > 0 {
		d.Filter.Before = b
	}
	d.Filtered = d.Filter.Actor != "" || d.Filter.Action != "" || d.Filter.Tool != "" || d.Filter.Outcome != "" ||
		!d.Filter.Since.IsZero() || !d.Filter.Until.IsZero()
	entries, err := c.o.Store.AuditPage(r.Context(), d.Filter)
	if err != nil {
		c.log.Error("console: read audit log", "err", err)
		p.Error = "Could not read the audit log (storage unavailable); reload in a moment."
	}
	if len(entries) > auditPageSize {
		entries = entries[:auditPageSize]
		next := url.Values{}
		for _, k := range []string{"actor", "action", "tool", "outcome", "since", "until"} {
			if v := q.Get(k); v != "" {
				next.Set(k, v)
			}
		}
		next.Set("before", strconv.FormatInt(entries[len(entries)-1].ID, 10))
		d.Older = "/admin/audit?" + next.Encode()
	}
	d.Entries = entries
	p.Data = d
	c.render(w, r, http.StatusOK, "audit", p)
}
