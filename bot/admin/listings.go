package admin

import (
	"net/http"
	"time"
)

// AuditRecord is one audit log entry, as the API shows it.
type AuditRecord struct {
	At          time.Time      `json:"at"`
	Actor       string         `json:"actor"`
	Action      string         `json:"action"`
	SubjectKind string         `json:"subject_kind"`
	SubjectID   string         `json:"subject_id"`
	Detail      map[string]any `json:"detail,omitempty"`
}

func (a *api) jobs(w http.ResponseWriter, r *http.Request) {
	if a.o.Jobs == nil {
		writeError(w, http.StatusNotFound, "jobs are not set up")
		return
	}
	list, err := a.o.Jobs(r.Context())
	a.answerList(w, "jobs", "listing jobs", list, err)
}

func (a *api) agents(w http.ResponseWriter, r *http.Request) {
	if a.o.Agents == nil {
		writeError(w, http.StatusNotFound, "agents are not available")
		return
	}
	out := []map[string]any{}
	for _, ag := range a.o.Agents.DescribedAgents() {
		out = append(out, map[string]any{"name": ag.Name, "description": ag.Description, "model": ag.Model})
	}
	if len(out) == 0 {
		out = append(out, map[string]any{"name": a.o.Agents.DefaultAgent()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func (a *api) sessions(w http.ResponseWriter, r *http.Request) {
	if a.o.Sessions == nil {
		writeError(w, http.StatusNotFound, "sessions are not available")
		return
	}
	q := r.URL.Query()
	agent := q.Get("agent")
	if agent == "" && a.o.Agents != nil {
		agent = a.o.Agents.DefaultAgent()
	}
	list, err := a.o.Sessions.ListSessions(r.Context(), agent, q.Get("scope"), limitOf(r, 50, 500))
	a.answerList(w, "sessions", "listing sessions", list, err)
}

func (a *api) audit(w http.ResponseWriter, r *http.Request) {
	if a.o.Audit == nil {
		writeError(w, http.StatusNotFound, "the audit log is not available")
		return
	}
	list, err := a.o.Audit(r.Context(), limitOf(r, 100, 1000))
	a.answerList(w, "audit", "reading the audit log", list, err)
}
