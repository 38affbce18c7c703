package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

// CustomToolStore keeps custom tools defined at run time (Postgres
// implements it; env values sealed).
type CustomToolStore interface {
	List(ctx context.Context) ([]exec.CustomSpec, error)
	Put(ctx context.Context, spec exec.CustomSpec, by string) error
	Delete(ctx context.Context, name, by string) (bool, error)
}

// CustomToolOptions serve /tools: the store, and how a stored tool is put
// into (or taken out of) the agents' registry without a restart.
type CustomToolOptions struct {
	Store     CustomToolStore
	Install   func(exec.CustomSpec) error
	Uninstall func(name string)
}

// customToolJSON is what /tools add takes.
type customToolJSON struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Parameters  json.RawMessage   `json:"parameters"`
	Command     string            `json:"command"`
	Timeout     string            `json:"timeout"` // a Go duration: "10s"
	Env         map[string]string `json:"env"`
}

// cmdTools is /tools [add JSON | remove NAME] (admins only).
func (r *Router) cmdTools(ctx context.Context, in channels.Inbound, args string) string {
	if !r.opts.Access.IsAdmin(in.Identity()) {
		return "Only admins can manage custom tools."
	}
	o := r.opts.CustomTools
	if o.Store == nil || o.Install == nil {
		return "Custom tools are not available here."
	}
	verb, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	switch verb {
	case "", "list":
		list, err := o.Store.List(ctx)
		if err != nil {
			r.log.Error("list custom tools", "err", err)
			return "Could not read the custom tools right now; try again in a minute."
		}
		if len(list) == 0 {
			return "No custom tools were added here (tools from the config file are not listed). Add one with /tools add {JSON}."
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		var b strings.Builder
		b.WriteString("Custom tools:\n")
		for _, t := range list {
			fmt.Fprintf(&b, "- %s: %s — `%s`", t.Name, t.Description, t.Command)
			if len(t.Env) > 0 {
				fmt.Fprintf(&b, " (%d env values, encrypted)", len(t.Env))
			}
			b.WriteString("\n")
		}
		return b.String()
	case "add":
		var j customToolJSON
		if err := json.Unmarshal([]byte(rest), &j); err != nil {
			return `Usage: /tools add {"name": "dns_lookup", "description": "…", "parameters": {"type": "object", ` +
				`"properties": {"domain": {"type": "string"}}}, "command": "dig +short {{.domain}}", "timeout": "10s", "env": {}}`
		}
		msg, _ := r.addCustomTool(ctx, j, in.Identity())
		return msg
	case "remove":
		name := strings.TrimSpace(rest)
		found, err := o.Store.Delete(ctx, name, in.Identity())
		if err != nil {
			r.log.Error("delete custom tool", "tool", name, "err", err)
			return "Could not remove it right now; try again in a minute."
		}
		if !found {
			return fmt.Sprintf("There is no stored custom tool %q (tools from the config file are removed there).", name)
		}
		if o.Uninstall != nil {
			o.Uninstall(name)
		}
		return "Removed custom tool " + name + "."
	}
	return "Usage: /tools, /tools add {JSON}, /tools remove NAME."
}

// addCustomTool checks, stores and installs a custom tool (/tools add and
// the admin API); the message says what happened, err is set when it was
// not added.
func (r *Router) addCustomTool(ctx context.Context, j customToolJSON, by string) (string, error) {
	o := r.opts.CustomTools
	if o.Store == nil || o.Install == nil {
		return "Custom tools are not available here.", errors.New("off")
	}
	for _, v := range j.Env {
		r.opts.AddSecret(v) // scrubbed from here on, whatever happens next
	}
	spec := exec.CustomSpec{Name: j.Name, Description: j.Description, Parameters: j.Parameters, Command: j.Command, Env: j.Env}
	if j.Timeout != "" {
		d, err := time.ParseDuration(j.Timeout)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return "timeout must be a duration up to 10m, like \"10s\".", errors.New("bad timeout")
		}
		spec.Timeout = d
	}
	if _, err := exec.NewCustom(spec, nil); err != nil {
		return "Not added: " + err.Error(), err
	}
	if err := o.Store.Put(ctx, spec, by); err != nil {
		r.log.Error("store custom tool", "tool", spec.Name, "err", err)
		return "Not added: " + err.Error(), err
	}
	if err := o.Install(spec); err != nil {
		return "Stored, but not installed: " + err.Error(), err
	}
	return fmt.Sprintf("Added custom tool %s; agents whose policy allows it (group:custom) can use it now.", spec.Name), nil
}
