package main

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/config"
	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
)

// customSpecs converts the config's custom tools.
func customSpecs(cfg *config.Config) []toolexec.CustomSpec {
	out := make([]toolexec.CustomSpec, 0, len(cfg.CustomTools))
	for _, t := range cfg.CustomTools {
		out = append(out, toolexec.CustomSpec{Name: t.Name, Description: t.Description, Parameters: t.ParametersJSON(),
			Command: t.Command, Timeout: t.Timeout, Env: t.Env})
	}
	return out
}

// installCustom puts a custom tool into the registry, replacing an older
// custom tool of that name; a built-in tool's name is refused.
func (d *daemon) installCustom(spec toolexec.CustomSpec) error {
	c, err := toolexec.NewCustom(spec, d.exec)
	if err != nil {
		return err
	}
	if old, ok := d.tools.Get(spec.Name); ok {
		if _, custom := old.(*toolexec.Custom); !custom {
			return fmt.Errorf("%q is the name of a built-in tool; choose another", spec.Name)
		}
		d.tools.Unregister(spec.Name)
	}
	for _, v := range spec.Env {
		d.scrubber.Add(v)
	}
	return d.tools.Register(c)
}

// loadCustomTools installs the custom tools stored in Postgres. Stored
// secrets without the key they were sealed with stop the start: running
// without them would break those tools silently.
func (d *daemon) loadCustomTools(ctx context.Context) error {
	specs, err := d.customs.List(ctx)
	if err != nil {
		return fmt.Errorf("stored custom tools: %w", err)
	}
	for _, s := range specs {
		if err := d.installCustom(s); err != nil {
			d.log.Error("stored custom tool not installed", "tool", s.Name, "err", err)
		}
	}
	if len(specs) > 0 {
		d.log.Info("custom tools installed", "count", len(specs))
	}
	return nil
}

// credentialedExec builds the credentialed_exec tool from the config.
func credentialedExec(cfg *config.Config, exec *toolexec.Exec) (*toolexec.CredentialedExec, error) {
	bins := make([]toolexec.CredentialedBinary, 0, len(cfg.CredentialedExec))
	for _, b := range cfg.CredentialedExec {
		deny, err := toolexec.CompileDeny(b.Binary, b.DenyArgs)
		if err != nil {
			return nil, fmt.Errorf("credentialed_exec %s: %w", b.Binary, err)
		}
		bins = append(bins, toolexec.CredentialedBinary{Name: b.Binary, Path: b.Path, Env: b.Env, DenyArgs: deny, Timeout: b.Timeout})
	}
	return toolexec.NewCredentialedExec(bins, exec)
}
