package admin

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// usage answers GET /api/v1/usage?group_by=…&since=RFC3339: the model
// usage since then (default: the start of the UTC day), one row per
// group. Only the feature's groupings are accepted, so nothing else
// reaches the query.
func (a *api) usage(w http.ResponseWriter, r *http.Request) {
	u := a.o.Usage
	if u.Rows == nil {
		writeError(w, http.StatusNotFound, "usage is not recorded")
		return
	}
	q := r.URL.Query()
	groupBy := q.Get("group_by")
	if !slices.Contains(u.GroupBys, groupBy) {
		writeError(w, http.StatusBadRequest, "group_by must be one of "+strings.Join(u.GroupBys, ", "))
		return
	}
	since := time.Now().UTC().Truncate(24 * time.Hour)
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			writeError(w, http.StatusBadRequest, "since must be an RFC 3339 time, e.g. 2026-01-31T00:00:00Z")
			return
		}
		since = t
	}
	rows, err := u.Rows(r.Context(), groupBy, since)
	if err != nil {
		a.storeFailed(w, "summing usage", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"group_by": groupBy, "since": since.UTC(), "usage": rows})
}
