package customtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/tools/exec"
)

// Store keeps custom tools defined at run time (Postgres implements it;
// env values sealed).
type Store interface {
	List(ctx context.Context) ([]exec.CustomSpec, error)
	Put(ctx context.Context, spec exec.CustomSpec, by string) error
	Delete(ctx context.Context, name, by string) (bool, error)
}

// Options wire a Catalog: the store, and how a stored tool is put into (or
// taken out of) the agents' registry without a restart.
type Options struct {
	Store     Store
	Install   func(exec.CustomSpec) error
	Uninstall func(name string)
	// AddSecret registers a secret value with the scrubber; nil: none.
	AddSecret func(string)
	Logger    *slog.Logger
}

// Catalog adds, lists and removes the custom tools defined at run time.
type Catalog struct {
	o Options
}

// ErrUnavailable is returned when the Catalog has no store.
var ErrUnavailable = errors.New("custom tools are not available here")

// New returns the Catalog of o. Without a Store (or an Install for
// adding), /tools answers that custom tools are not available.
func New(o Options) *Catalog {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AddSecret == nil {
		o.AddSecret = func(string) {}
	}
	return &Catalog{o: o}
}

// Definition is a custom tool as /tools add and the admin API take it.
type Definition struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Parameters  json.RawMessage   `json:"parameters"`
	Command     string            `json:"command"`
	Timeout     string            `json:"timeout"` // a Go duration: "10s"
	Env         map[string]string `json:"env"`
}

// canAdd reports whether tools can be stored and installed; a nil Catalog
// cannot.
func (c *Catalog) canAdd() bool { return c != nil && c.o.Store != nil && c.o.Install != nil }

// List returns the stored custom tools.
func (c *Catalog) List(ctx context.Context) ([]exec.CustomSpec, error) {
	if c.o.Store == nil {
		return nil, ErrUnavailable
	}
	return c.o.Store.List(ctx)
}

// Add checks, stores and installs a custom tool on behalf of by; the
// message says what happened, err is set when it was not added.
func (c *Catalog) Add(ctx context.Context, d Definition, by string) (string, error) {
	if !c.canAdd() {
		return "Custom tools are not available here.", ErrUnavailable
	}
	for _, v := range d.Env {
		c.o.AddSecret(v) // scrubbed from here on, whatever happens next
	}
	spec := exec.CustomSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters, Command: d.Command, Env: d.Env}
	if d.Timeout != "" {
		t, err := time.ParseDuration(d.Timeout)
		if err != nil || t <= 0 || t > 10*time.Minute {
			return "timeout must be a duration up to 10m, like \"10s\".", errors.New("bad timeout")
		}
		spec.Timeout = t
	}
	if _, err := exec.NewCustom(spec, nil); err != nil {
		return "Not added: " + err.Error(), err
	}
	if err := c.o.Store.Put(ctx, spec, by); err != nil {
		c.o.Logger.Error("store custom tool", "tool", spec.Name, "err", err)
		return "Not added: " + err.Error(), err
	}
	if err := c.o.Install(spec); err != nil {
		return "Stored, but not installed: " + err.Error(), err
	}
	return fmt.Sprintf("Added custom tool %s; agents whose policy allows it (group:custom) can use it now.", spec.Name), nil
}

// Remove deletes the stored custom tool name on behalf of by and takes it
// out of the registry; found is false when no such tool is stored.
func (c *Catalog) Remove(ctx context.Context, name, by string) (found bool, err error) {
	if c.o.Store == nil {
		return false, ErrUnavailable
	}
	found, err = c.o.Store.Delete(ctx, name, by)
	if found && err == nil && c.o.Uninstall != nil {
		c.o.Uninstall(name)
	}
	return found, err
}
