package main

import "github.com/switchboard-chat/switchboard/agentcore"

// compactor is the daemon's Compactor, made on first use, or nil when
// agent.compaction is off.
func (d *daemon) compactor() *agentcore.Compactor {
	if !d.cfg.Agent.Compaction {
		return nil
	}
	if d.compaction == nil {
		d.compaction = &agentcore.Compactor{Store: d.st.db, Logger: d.log}
	}
	return d.compaction
}
