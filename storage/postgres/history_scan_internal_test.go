package postgres

import (
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// A role read from a row is the role it says; the four the agent writes
// come without a new string each.
func TestRoleScanReadsRoles(t *testing.T) {
	for _, role := range []agentcore.Role{agentcore.RoleUser, agentcore.RoleAssistant, agentcore.RoleTool, agentcore.RoleSystem, "narrator", ""} {
		raw := []byte(role)
		var r roleScan
		if err := r.ScanBytes(raw); err != nil {
			t.Fatal(err)
		}
		clear(raw) // driver memory is reused after the call
		if r.role != role {
			t.Errorf("ScanBytes(%q) = %q", role, r.role)
		}
	}
	raw := []byte("assistant")
	var r roleScan
	if n := testing.AllocsPerRun(100, func() { _ = r.ScanBytes(raw) }); n != 0 {
		t.Errorf("reading a known role allocates %v times", n)
	}
}
