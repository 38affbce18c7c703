package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/audit"
	"github.com/switchboard-chat/switchboard/bot/contextfiles"
	"github.com/switchboard-chat/switchboard/bot/customtools"
	"github.com/switchboard-chat/switchboard/bot/handoff"
	"github.com/switchboard-chat/switchboard/bot/modelswitch"
	"github.com/switchboard-chat/switchboard/bot/retention"
	"github.com/switchboard-chat/switchboard/bot/skills"
	llmusage "github.com/switchboard-chat/switchboard/bot/usage"
)

// wireFeatures hooks the features into the router. Their chat commands
// are registered in the order /help lists them: /tasks, /model, /usage,
// /reset, /forget, /audit, /handoff, /context, /skills, /approvals, /cancel,
// /revoke, /tools, /login, /logout, /jobs. allow and owner
// are as for wireDecisions and wireJobs.
func (d *daemon) wireFeatures(allow []string, owner string) error {
	if err := d.wireTeams(); err != nil {
		return err
	}
	if err := d.router.Register(modelswitch.Commands(d.chatModels)...); err != nil {
		return fmt.Errorf("model switch: %w", err)
	}
	if err := d.router.Register(llmusage.Commands(d.usage)...); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	if err := d.router.Register(retention.Commands(retention.Options{Store: d.st.db, RemoveFiles: d.removeInbox, Logger: d.log})...); err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	if err := d.router.Register(audit.Commands(d.st.db, d.log)...); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := d.router.Register(handoff.Commands(d.handoff)...); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	ctxCmds := contextfiles.Commands(contextfiles.Options{Docs: d.st.docs, Chats: d.router, Logger: d.log})
	if err := d.router.Register(ctxCmds...); err != nil {
		return fmt.Errorf("context files: %w", err)
	}
	if err := d.router.Register(skills.Commands(skills.CommandOptions{Catalog: d.skills, Store: d.st.skills, Chats: d.router, Logger: d.log})...); err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	if err := d.wireAskUser(); err != nil {
		return err
	}
	if err := d.wireDecisions(allow); err != nil {
		return err
	}
	if err := d.wireBudgets(); err != nil {
		return err
	}
	var err error
	if d.knowledge, err = d.newKnowledgeWorker(); err != nil {
		return err
	}
	d.customTools = customtools.New(customtools.Options{
		Store: d.customs, Install: d.installCustom, Uninstall: d.tools.Unregister,
		AddSecret: func(v string) { d.scrubber.Add(v) }, Logger: d.log,
	})
	if err := d.router.Register(customtools.Commands(d.customTools)...); err != nil {
		return fmt.Errorf("custom tools: %w", err)
	}
	if err := d.wireConsole(); err != nil {
		return err
	}
	return d.wireJobs(owner)
}
