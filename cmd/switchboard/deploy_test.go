package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/switchboard-chat/switchboard/config"
)

// The deploy kit cannot be run here (no container engine, no systemd), so
// these tests check the properties that made it fail before.

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dockerStages splits a Dockerfile into its stages by name.
func dockerStages(src string) map[string]string {
	stages := map[string]string{}
	name := ""
	from := regexp.MustCompile(`(?i)^FROM\s+\S+(?:\s+AS\s+(\S+))?`)
	for _, line := range strings.Split(src, "\n") {
		if m := from.FindStringSubmatch(line); m != nil {
			name = m[1]
		}
		stages[name] += line + "\n"
	}
	return stages
}

func TestDockerfile(t *testing.T) {
	src := readDeploy(t, "deploy/Dockerfile")
	stages := dockerStages(src)
	base, embedded, runtime := stages["base"], stages["embedded"], stages["runtime"]
	if base == "" || embedded == "" || runtime == "" {
		t.Fatalf("want stages base, embedded and runtime; have %d stages", len(stages))
	}
	// The health check asks the binary (there is no bash for /dev/tcp).
	if !strings.Contains(base, `HEALTHCHECK`) || !strings.Contains(base, `"/usr/local/bin/switchboard", "healthcheck"]`) {
		t.Error("HEALTHCHECK must run `switchboard healthcheck`")
	}
	if strings.Contains(src, "/dev/tcp") {
		t.Error("a /dev/tcp health check never passes under dash")
	}
	if !strings.Contains(base, "VOLUME") {
		t.Error("no VOLUME for the data directory")
	}
	if strings.Contains(base, "postgresql") || strings.Contains(runtime, "postgresql") {
		t.Error("the image for external databases must not carry PostgreSQL")
	}
	if !strings.Contains(embedded, "postgresql") {
		t.Error("the embedded target must install PostgreSQL")
	}
	// The default target is the last stage, and every final image drops root.
	last := src[strings.LastIndex(strings.ToUpper(src), "\nFROM "):]
	if !strings.Contains(last, "AS runtime") {
		t.Error("the default (last) stage must be runtime")
	}
	for name, stage := range map[string]string{"embedded": embedded, "runtime": runtime} {
		if !strings.Contains(stage, "USER switchboard") {
			t.Errorf("stage %s runs as root", name)
		}
	}
	// The default image has no in-process Redis; the embedded one keeps it.
	build := stages["build"]
	if !strings.Contains(build, "-tags noembedded") || !strings.Contains(build, "-o /out/switchboard ") {
		t.Error("the default binary must be built with -tags noembedded")
	}
	if !strings.Contains(embedded, "/out/switchboard-embedded") {
		t.Error("the embedded target must carry the binary with the in-process Redis")
	}
	ignore := readDeploy(t, ".dockerignore")
	for _, want := range []string{".git", "data/", "deploy/.env"} {
		if !strings.Contains(ignore, want+"\n") {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
}

func TestCompose(t *testing.T) {
	var c struct {
		Services map[string]struct {
			EnvFile []struct {
				Path     string `yaml:"path"`
				Required *bool  `yaml:"required"`
			} `yaml:"env_file"`
			Volumes     []string                     `yaml:"volumes"`
			DependsOn   map[string]map[string]string `yaml:"depends_on"`
			Healthcheck map[string]any               `yaml:"healthcheck"`
			SecurityOpt []string                     `yaml:"security_opt"`
			CapDrop     []string                     `yaml:"cap_drop"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readDeploy(t, "deploy/docker-compose.yml")), &c); err != nil {
		t.Fatalf("compose file: %v", err)
	}
	app, ok := c.Services["switchboard"]
	if !ok {
		t.Fatal("no switchboard service")
	}
	for _, f := range app.EnvFile {
		if f.Required == nil || *f.Required {
			t.Errorf("env_file %s is required: compose fails without it", f.Path)
		}
	}
	if len(app.Volumes) == 0 || !strings.HasSuffix(app.Volumes[0], ":/var/lib/switchboard") {
		t.Errorf("the app has no data volume: %v", app.Volumes)
	}
	for _, p := range composeSandboxProblems("switchboard", app.SecurityOpt, app.CapDrop) {
		t.Error(p)
	}
	for _, dep := range []string{"postgres", "redis"} {
		if app.DependsOn[dep]["condition"] != "service_healthy" {
			t.Errorf("the app does not wait for %s to be healthy", dep)
		}
		if c.Services[dep].Healthcheck == nil {
			t.Errorf("%s has no health check to wait for", dep)
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	unit := readDeploy(t, "deploy/switchboard.service")
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=switchboard", "NoNewPrivileges=yes",
		"ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n",
		"LoadCredential=telegram_token:", "SWITCHBOARD_TELEGRAM_TOKEN_FILE=%d/telegram_token"} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	if strings.Contains(unit, "EnvironmentFile") {
		t.Error("secrets come through LoadCredential, not an environment file")
	}
}

// TestExampleConfig: the example loads and validates, and schedules no job
// to its placeholder chat.
func TestExampleConfig(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{File: filepath.Join("..", "..", "deploy", "switchboard.example.yaml"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("example config is invalid: %v", err)
	}
	for _, j := range cfg.Jobs {
		if j.IsEnabled() {
			t.Errorf("example job %q is live; a placeholder target must not be scheduled", j.Name)
		}
	}
}
