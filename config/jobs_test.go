package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadJobsFromFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "switchboard.yaml")
	yaml := `jobs:
  - name: standup
    schedule: "0 9 * * 1-5"
    timezone: Europe/Berlin
    prompt: Summarise open incidents
    target: telegram:-100123
  - name: paused
    schedule: "@hourly"
    prompt: x
    target: slack:C1
    enabled: false
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(LoadOptions{File: file, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Jobs) != 2 || c.Jobs[0].Name != "standup" || c.Jobs[0].Timezone != "Europe/Berlin" || c.Jobs[0].Target != "telegram:-100123" {
		t.Fatalf("jobs = %+v", c.Jobs)
	}
	if !c.Jobs[0].IsEnabled() || c.Jobs[1].IsEnabled() {
		t.Fatalf("enabled flags wrong: %+v", c.Jobs)
	}
}
