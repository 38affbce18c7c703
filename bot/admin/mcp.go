package admin

import (
	"encoding/json"
	"net/http"
)

func (a *api) mcpServers(w http.ResponseWriter, r *http.Request) {
	if a.o.MCP.List == nil {
		writeError(w, http.StatusNotFound, "MCP is not set up")
		return
	}
	list, err := a.o.MCP.List(r.Context())
	a.answerList(w, "servers", "listing MCP servers", list, err)
}

func (a *api) addMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.o.MCP.Add == nil {
		writeError(w, http.StatusNotFound, "MCP is not set up")
		return
	}
	var raw json.RawMessage
	if !readJSON(w, r, &raw) {
		return
	}
	if err := a.o.MCP.Add(r.Context(), raw, APIActor); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"result": "stored; connecting now"})
}

func (a *api) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.o.MCP.Remove == nil {
		writeError(w, http.StatusNotFound, "MCP is not set up")
		return
	}
	found, err := a.o.MCP.Remove(r.Context(), r.PathValue("name"), APIActor)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, err.Error())
	case !found:
		writeError(w, http.StatusNotFound, "no MCP server "+r.PathValue("name")+" added at run time (the config's are changed there)")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
