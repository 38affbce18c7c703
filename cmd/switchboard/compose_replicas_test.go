package main

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The three-replica compose file cannot be run here (no container engine),
// so these tests read it, and the nginx configuration in front of it, for
// the properties that make several replicas work.
// TestComposeChecksCatchBrokenFiles breaks the files on purpose to show that
// each check can fail.

// replicaComposeFile is what these tests read of a compose file.
type replicaComposeFile struct {
	Services map[string]replicaComposeService `yaml:"services"`
	Volumes  map[string]any                   `yaml:"volumes"`
}

type replicaComposeService struct {
	Image       string            `yaml:"image"`
	Build       map[string]string `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Volumes         []string `yaml:"volumes"`
	Ports           []string `yaml:"ports"`
	StopGracePeriod string   `yaml:"stop_grace_period"`
	SecurityOpt     []string `yaml:"security_opt"`
	CapDrop         []string `yaml:"cap_drop"`
}

// checkReplicaCompose checks deploy/docker-compose.replicas.yml (src)
// against deploy/docker-compose.yml (single); read reads a file relative
// to deploy/.
func checkReplicaCompose(src, single string, read func(string) (string, error)) deployProblems {
	var p deployProblems
	var c, one replicaComposeFile
	src, single = composeInterpolate(src), composeInterpolate(single)
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		p.addf("compose file: %v", err)
		return p
	}
	if err := yaml.Unmarshal([]byte(single), &one); err != nil {
		p.addf("docker-compose.yml: %v", err)
		return p
	}
	ref := one.Services["switchboard"]

	// The replicas: the services running the switchboard image.
	var replicas []string
	image := ""
	for _, s := range c.Services {
		if s.Build != nil && s.Build["dockerfile"] == ref.Build["dockerfile"] {
			image = s.Image
		}
	}
	builders := 0
	for name, s := range c.Services {
		if s.Build == nil && (s.Image == "" || s.Image != image) ||
			s.Build != nil && s.Build["dockerfile"] != ref.Build["dockerfile"] {
			continue
		}
		replicas = append(replicas, name)
		if s.Build != nil {
			builders++
			for k, v := range ref.Build {
				if s.Build[k] != v {
					p.addf("%s builds with %s=%q, docker-compose.yml with %q", name, k, s.Build[k], v)
				}
			}
		}
	}
	sort.Strings(replicas)
	if len(replicas) != 3 {
		p.addf("want 3 switchboard services, have %v", replicas)
	}
	if builders == 0 {
		p.addf("no switchboard service builds the image (deploy/Dockerfile)")
	}
	if image == "" && builders < len(replicas) {
		p.addf("the replicas that do not build name no image for the one that does to tag")
	}

	names := map[string]string{}
	volumes := map[string]string{}
	for _, name := range replicas {
		s := c.Services[name]
		env := s.Environment
		if r := env["SWITCHBOARD_REPLICA"]; r == "" {
			p.addf("%s has no SWITCHBOARD_REPLICA", name)
		} else if other, dup := names[r]; dup {
			p.addf("%s and %s are both replica %q", other, name, r)
		} else {
			names[r] = name
		}
		for _, k := range []string{"SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_REDIS_URL"} {
			if env[k] == "" || env[k] != ref.Environment[k] {
				p.addf("%s: %s=%q, want the shared %q of docker-compose.yml", name, k, env[k], ref.Environment[k])
				continue
			}
			u, err := url.Parse(env[k])
			if err != nil {
				p.addf("%s: %s: %v", name, k, err)
			} else if c.Services[u.Hostname()].Image == "" {
				p.addf("%s: %s names host %q, which is no service here", name, k, u.Hostname())
			}
		}
		if env["SWITCHBOARD_HTTP_LISTEN"] != "0.0.0.0:8080" {
			p.addf("%s: SWITCHBOARD_HTTP_LISTEN %q, want 0.0.0.0:8080", name, env["SWITCHBOARD_HTTP_LISTEN"])
		}
		if !slices.Equal(s.Command, []string{"serve"}) {
			p.addf("%s: command %v, want [serve]", name, s.Command)
		}
		for _, dep := range []string{"postgres", "redis"} {
			if s.DependsOn[dep].Condition != "service_healthy" {
				p.addf("%s does not wait for %s to be healthy", name, dep)
			}
			if len(c.Services[dep].Healthcheck.Test) == 0 {
				p.addf("%s has no health check to wait for", dep)
			}
		}
		if !slices.Contains(s.Healthcheck.Test, "healthcheck") || !strings.Contains(strings.Join(s.Healthcheck.Test, " "), "switchboard") {
			p.addf("%s: health check %v does not run `switchboard healthcheck`", name, s.Healthcheck.Test)
		}
		if d, err := time.ParseDuration(s.StopGracePeriod); err != nil || d < 15*time.Second {
			p.addf("%s: stop_grace_period %q; a replica takes up to ~10 s to hand over, want ≥ 15s", name, s.StopGracePeriod)
		}
		for _, pr := range composeSandboxProblems(name, s.SecurityOpt, s.CapDrop) {
			p.addf("%s", pr)
		}
		if len(s.Ports) != 0 {
			p.addf("%s publishes %v: only the proxy is the way in", name, s.Ports)
		}
		for _, v := range s.Volumes {
			vol, target, _ := strings.Cut(v, ":")
			if strings.HasPrefix(target, "/var/lib/switchboard") {
				if other, dup := volumes[vol]; dup {
					p.addf("%s and %s share the data volume %s", other, name, vol)
				}
				volumes[vol] = name
			}
		}
	}

	// The proxy: depends on every replica and balances over all three.
	var proxies []string
	for name, s := range c.Services {
		deps := 0
		for _, r := range replicas {
			if _, ok := s.DependsOn[r]; ok {
				deps++
			}
		}
		if deps > 0 || (len(s.Ports) > 0 && !slices.Contains(replicas, name)) {
			proxies = append(proxies, name)
			if deps != len(replicas) {
				p.addf("%s depends on %d of the %d replicas", name, deps, len(replicas))
			}
		}
	}
	if len(proxies) != 1 {
		p.addf("want one proxy in front of the replicas, have %v", proxies)
		return p
	}
	proxy := c.Services[proxies[0]]
	if len(proxy.Ports) != 1 {
		p.addf("the proxy publishes %v, want one port", proxy.Ports)
	}
	if strings.Count(strings.Split(proxy.Image, ":")[0], "/") > 0 || proxy.Image == "" {
		p.addf("the proxy image %q is not an official image", proxy.Image)
	}
	var conf string
	for _, v := range proxy.Volumes {
		if src, _, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(src, "./") {
			b, err := read(strings.TrimPrefix(src, "./"))
			if err != nil {
				p.addf("the proxy's %s: %v", src, err)
				continue
			}
			conf += b
		}
	}
	if conf == "" {
		p.addf("the proxy mounts no configuration from deploy/")
		return p
	}
	checkNginx(&p, conf, replicas, proxy.Ports)
	return p
}

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}`)

// composeInterpolate replaces ${VAR:-default} and ${VAR} with the default
// (or nothing), as compose does with an empty environment.
func composeInterpolate(s string) string {
	return composeVar.ReplaceAllString(s, "$2")
}

var (
	nginxUpstream = regexp.MustCompile(`(?s)upstream\s+(\S+)\s*\{(.*?)\}`)
	nginxServer   = regexp.MustCompile(`(?m)^\s*server\s+([^\s;]+)`)
	nginxListen   = regexp.MustCompile(`(?m)^\s*listen\s+(?:\S+:)?(\d+)`)
	nginxWebhooks = regexp.MustCompile(`(?s)location\s+/webhooks/?\s*\{([^}]*)\}`)
	nginxPass     = regexp.MustCompile(`proxy_pass\s+http://([^/;\s]+)`)
)

// checkNginx checks the proxy's nginx configuration: an upstream naming
// every replica's :8080, /webhooks/ sent to it, and the published port
// reaching the listen port.
func checkNginx(p *deployProblems, conf string, replicas []string, ports []string) {
	upstreams := map[string][]string{}
	for _, m := range nginxUpstream.FindAllStringSubmatch(conf, -1) {
		for _, s := range nginxServer.FindAllStringSubmatch(m[2], -1) {
			upstreams[m[1]] = append(upstreams[m[1]], s[1])
		}
	}
	wh := nginxWebhooks.FindStringSubmatch(conf)
	if wh == nil {
		p.addf("the proxy has no location /webhooks/")
		return
	}
	pass := nginxPass.FindStringSubmatch(wh[1])
	if pass == nil {
		p.addf("the proxy's /webhooks/ has no proxy_pass")
		return
	}
	servers := upstreams[pass[1]]
	for _, r := range replicas {
		if !slices.Contains(servers, net.JoinHostPort(r, "8080")) {
			p.addf("upstream %s (%v) does not name %s:8080", pass[1], servers, r)
		}
	}
	if len(servers) != len(replicas) {
		p.addf("upstream %s has %d servers for %d replicas", pass[1], len(servers), len(replicas))
	}
	listen := nginxListen.FindStringSubmatch(conf)
	if listen == nil {
		p.addf("nginx has no listen port")
		return
	}
	for _, port := range ports {
		parts := strings.Split(port, ":")
		if parts[len(parts)-1] != listen[1] {
			p.addf("the proxy publishes %s, but nginx listens on %s", port, listen[1])
		}
	}
}

func readDeployFile(rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", filepath.FromSlash(rel)))
	return string(b), err
}

func TestComposeReplicas(t *testing.T) {
	src := readDeploy(t, "deploy/docker-compose.replicas.yml")
	single := readDeploy(t, "deploy/docker-compose.yml")
	for _, pr := range checkReplicaCompose(src, single, readDeployFile) {
		t.Error(pr)
	}
}

// TestComposeChecksCatchBrokenFiles breaks the compose file and the proxy's
// configuration and expects checkReplicaCompose to notice.
func TestComposeChecksCatchBrokenFiles(t *testing.T) {
	src := readDeploy(t, "deploy/docker-compose.replicas.yml")
	single := readDeploy(t, "deploy/docker-compose.yml")
	conf := readDeploy(t, "deploy/proxy/nginx.conf")
	for _, tc := range []struct {
		name      string
		inConf    bool
		old, new  string
		wantIssue string
	}{
		{"two replica-2", false, "SWITCHBOARD_REPLICA: replica-3", "SWITCHBOARD_REPLICA: replica-2", "both replica"},
		{"own Redis", false, "      SWITCHBOARD_REPLICA: replica-2\n", "      SWITCHBOARD_REPLICA: replica-2\n      SWITCHBOARD_REDIS_URL: redis://other:6379/0\n", "SWITCHBOARD_REDIS_URL"},
		{"proxy misses a replica", false, "      switchboard-3: { condition: service_started }\n", "", "depends on 2 of the 3"},
		{"upstream misses a replica", true, "    server switchboard-3:8080", "    # server switchboard-3:8080", "does not name switchboard-3:8080"},
		{"webhooks not proxied", true, "location /webhooks/ {", "location /hooks/ {", "no location /webhooks/"},
		{"short stop grace", false, "stop_grace_period: 15s", "stop_grace_period: 5s", "stop_grace_period"},
		{"shared data volume", false, "[appdata2:/var/lib/switchboard]", "[appdata1:/var/lib/switchboard]", "share the data volume"},
		{"replica published", false, "    volumes: [appdata3:/var/lib/switchboard]\n", "    volumes: [appdata3:/var/lib/switchboard]\n    ports: [\"8083:8080\"]\n", "only the proxy"},
		{"a fourth replica", false, "  proxy:\n", "  switchboard-4:\n    <<: *switchboard\n    environment: {SWITCHBOARD_REPLICA: replica-4}\n  proxy:\n", "want 3 switchboard services"},
		{"no health check", false, `test: ["CMD", "/usr/local/bin/switchboard", "healthcheck"]`, `test: ["CMD", "true"]`, "switchboard healthcheck"},
		{"masked /proc", false, `"systempaths=unconfined", `, "", "lacks systempaths=unconfined"},
		{"other Dockerfile target", false, "target: runtime }", "target: embedded }", "builds with target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cf := src, conf
			target := &s
			if tc.inConf {
				target = &cf
			}
			if !strings.Contains(*target, tc.old) {
				t.Fatalf("the file no longer contains %q: update this case", tc.old)
			}
			*target = strings.Replace(*target, tc.old, tc.new, 1)
			read := func(rel string) (string, error) {
				if rel == "proxy/nginx.conf" {
					return cf, nil
				}
				return readDeployFile(rel)
			}
			got := checkReplicaCompose(s, single, read)
			for _, pr := range got {
				if strings.Contains(pr, tc.wantIssue) {
					return
				}
			}
			t.Errorf("no problem mentions %q; got %q", tc.wantIssue, got)
		})
	}
}
