package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/contextfiles"
	"github.com/switchboard-chat/switchboard/bot/customtools"
)

// registerCommands builds the custom-tools catalog and registers the chat
// commands of the context-files and custom-tools features with the
// router, in the order /help lists them: /context, then /tools (/jobs
// follows, from wireJobs).
func (d *daemon) registerCommands() error {
	d.customTools = customtools.New(customtools.Options{
		Store: d.customs, Install: d.installCustom, Uninstall: d.tools.Unregister,
		AddSecret: func(v string) { d.scrubber.Add(v) }, Logger: d.log,
	})
	cmds := contextfiles.Commands(contextfiles.Options{Docs: d.st.docs, Chats: d.router, Logger: d.log})
	if err := d.router.Register(append(cmds, customtools.Commands(d.customTools)...)...); err != nil {
		return fmt.Errorf("chat commands: %w", err)
	}
	return nil
}
