package admin

import (
	"errors"
	"net/http"

	"github.com/switchboard-chat/switchboard/bot/customtools"
)

// customToolsOff answers 404 when custom tools are not set up, and
// reports whether it did.
func (a *api) customToolsOff(w http.ResponseWriter, err error) bool {
	if a.o.CustomTools == nil || errors.Is(err, customtools.ErrUnavailable) {
		writeError(w, http.StatusNotFound, "custom tools are not set up")
		return true
	}
	return false
}

func (a *api) customTools(w http.ResponseWriter, r *http.Request) {
	if a.customToolsOff(w, nil) {
		return
	}
	list, err := a.o.CustomTools.List(r.Context())
	if a.customToolsOff(w, err) {
		return
	}
	if err != nil {
		a.storeFailed(w, "listing custom tools", err)
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, t := range list {
		names := make([]string, 0, len(t.Env))
		for k := range t.Env {
			names = append(names, k) // never the values
		}
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters,
			"command": t.Command, "timeout": t.Timeout.String(), "env_names": names})
	}
	writeJSON(w, http.StatusOK, map[string]any{"custom_tools": out})
}

func (a *api) addCustomTool(w http.ResponseWriter, r *http.Request) {
	var d customtools.Definition
	if !readJSON(w, r, &d) {
		return
	}
	if a.o.CustomTools == nil {
		writeError(w, http.StatusBadRequest, "Custom tools are not available here.")
		return
	}
	msg, err := a.o.CustomTools.Add(r.Context(), d, APIActor)
	if err != nil {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"name": d.Name, "result": msg})
}

func (a *api) deleteCustomTool(w http.ResponseWriter, r *http.Request) {
	if a.customToolsOff(w, nil) {
		return
	}
	name := r.PathValue("name")
	found, err := a.o.CustomTools.Remove(r.Context(), name, APIActor)
	switch {
	case a.customToolsOff(w, err):
	case err != nil:
		a.storeFailed(w, "deleting", err)
	case !found:
		writeError(w, http.StatusNotFound, "no stored custom tool "+name)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
