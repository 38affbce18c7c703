package main

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/switchboard-chat/switchboard/config"
)

// The Helm chart (deploy/helm/switchboard) cannot be installed here (no
// cluster), so these tests check what Helm renders (helm_render_test.go)
// for what a cluster would need: the objects a kubeconform run would
// reject, and the properties that make several replicas work. Every check
// lives in a function that returns its problems (deployProblems, shared
// with the compose checks in compose_replicas_test.go), and
// TestHelmChecksCatchBrokenCharts breaks the chart on purpose to show that
// each check can fail.

// deployProblems collects what a check finds.
type deployProblems []string

func (p *deployProblems) addf(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// helmWant is what a rendering must contain.
type helmWant struct {
	replicas       int
	secretName     string
	ingressHost    string // "" → no Ingress
	serviceMonitor bool
	pdb            bool
	configFile     bool
	telegramMode   string
	sandbox        bool // execSandbox.enabled
}

var (
	dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	labelValue   = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// checkHelmObjects checks one rendering against want; dir is a scratch
// directory for the configuration check.
func checkHelmObjects(r *helmRender, want helmWant, dir string) deployProblems {
	var p deployProblems
	byKind := map[string][]k8sObj{}
	seen := map[string]bool{}
	for _, o := range r.objs {
		id := o.kind() + "/" + o.name()
		if kStr(o.m["apiVersion"]) == "" || o.kind() == "" || o.name() == "" {
			p.addf("%s: a document lacks apiVersion, kind or metadata.name", o.file)
			continue
		}
		if seen[id] {
			p.addf("%s: %s rendered twice", o.file, id)
		}
		seen[id] = true
		byKind[o.kind()] = append(byKind[o.kind()], o)
		if len(o.name()) > 63 || !dns1123Label.MatchString(o.name()) {
			p.addf("%s: name %q is not a DNS label", id, o.name())
		}
		if ns := kStr(kDig(o.m, "metadata", "namespace")); ns != helmNamespace {
			p.addf("%s: namespace %q, want the release's %q", id, ns, helmNamespace)
		}
		checkK8sLabels(&p, id+" metadata.labels", kDig(o.m, "metadata", "labels"))
		checkK8sStrings(&p, id+" metadata.annotations", kDig(o.m, "metadata", "annotations"))
		checkK8sSchema(&p, o)
	}

	one := func(kind string, present bool) *k8sObj {
		objs := byKind[kind]
		switch {
		case present && len(objs) != 1:
			p.addf("want one %s, have %d", kind, len(objs))
		case !present && len(objs) != 0:
			p.addf("want no %s, have %d", kind, len(objs))
		case present:
			return &objs[0]
		}
		return nil
	}
	dep := one("Deployment", true)
	svc := one("Service", true)
	ing := one("Ingress", want.ingressHost != "")
	sm := one("ServiceMonitor", want.serviceMonitor)
	pdb := one("PodDisruptionBudget", want.pdb)
	cm := one("ConfigMap", want.configFile)
	if dep == nil || svc == nil {
		return p
	}

	// Selectors: the Deployment's picks its own pods, and every other
	// selector is exactly it.
	sel := kStrings(kDig(dep.m, "spec", "selector", "matchLabels"))
	podLabels := kStrings(kDig(dep.m, "spec", "template", "metadata", "labels"))
	checkK8sLabels(&p, "pod template labels", kDig(dep.m, "spec", "template", "metadata", "labels"))
	for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance"} {
		if sel[k] == "" {
			p.addf("Deployment selector lacks %s (another release's pods would match)", k)
		}
	}
	if sel["app.kubernetes.io/instance"] != "" && sel["app.kubernetes.io/instance"] != helmRelease {
		p.addf("Deployment selector instance %q, want the release name %q", sel["app.kubernetes.io/instance"], helmRelease)
	}
	if !labelsSubset(sel, podLabels) {
		p.addf("pod template labels %v do not carry the Deployment selector %v", podLabels, sel)
	}
	if !labelsSubset(sel, kStrings(kDig(dep.m, "metadata", "labels"))) {
		p.addf("Deployment labels do not carry the selector labels %v", sel)
	}
	if got := kStrings(kDig(svc.m, "spec", "selector")); !labelsEqual(got, sel) {
		p.addf("Service selector %v, want the Deployment's %v", got, sel)
	}
	if pdb != nil {
		if got := kStrings(kDig(pdb.m, "spec", "selector", "matchLabels")); !labelsEqual(got, sel) {
			p.addf("PodDisruptionBudget selector %v, want the Deployment's %v", got, sel)
		}
		if n, ok := kInt(kDig(pdb.m, "spec", "minAvailable")); ok && n >= want.replicas {
			p.addf("PodDisruptionBudget minAvailable %d with %d replicas blocks every drain", n, want.replicas)
		}
	}
	if sm != nil {
		if got := kStrings(kDig(sm.m, "spec", "selector", "matchLabels")); !labelsSubset(got, kStrings(kDig(svc.m, "metadata", "labels"))) || len(got) == 0 {
			p.addf("ServiceMonitor selector %v does not match the Service's labels", got)
		}
		if !labelsSubset(sel, kStrings(kDig(sm.m, "spec", "selector", "matchLabels"))) {
			p.addf("ServiceMonitor selector lacks the release's selector labels %v (it would scrape other releases)", sel)
		}
	}

	spec := kMap(dep.m, "spec", "template", "spec")
	if n, ok := kInt(kDig(dep.m, "spec", "replicas")); !ok || n != want.replicas {
		p.addf("Deployment replicas %v, want %d", kDig(dep.m, "spec", "replicas"), want.replicas)
	}
	if n, ok := kInt(spec["terminationGracePeriodSeconds"]); !ok || n < 15 {
		p.addf("terminationGracePeriodSeconds %v: a replica takes up to ~10 s to hand over; want ≥ 15", spec["terminationGracePeriodSeconds"])
	}
	for _, term := range antiAffinityTerms(spec) {
		if !labelsSubset(kStrings(kDig(term, "labelSelector", "matchLabels")), podLabels) {
			p.addf("podAntiAffinity selector %v does not match the pods' labels", kDig(term, "labelSelector", "matchLabels"))
		}
	}
	for _, c := range kList(spec, "topologySpreadConstraints") {
		if !labelsSubset(kStrings(kDig(c, "labelSelector", "matchLabels")), podLabels) || len(kStrings(kDig(c, "labelSelector", "matchLabels"))) == 0 {
			p.addf("topologySpreadConstraints selector %v does not match the pods' labels", kDig(c, "labelSelector", "matchLabels"))
		}
	}

	containers := kList(spec, "containers")
	if len(containers) != 1 {
		p.addf("want one container, have %d", len(containers))
		return p
	}
	ctr, _ := containers[0].(map[string]any)
	checkHelmContainer(&p, spec, ctr, want)

	// The Service reaches the container's port 8080.
	ports := kList(svc.m, "spec", "ports")
	var svcPortNames []string
	var svcPortNumbers []int
	for _, sp := range ports {
		svcPortNames = append(svcPortNames, kStr(kDig(sp, "name")))
		n, _ := kInt(kDig(sp, "port"))
		svcPortNumbers = append(svcPortNumbers, n)
		if got := containerPortOf(ctr, kDig(sp, "targetPort")); got != 8080 {
			p.addf("Service port %v targets container port %d, want 8080", kDig(sp, "name"), got)
		}
	}
	if !slices.Contains(svcPortNames, "http") {
		p.addf("Service has no port named http: %v", svcPortNames)
	}
	if t := kStr(kDig(svc.m, "spec", "type")); t != "ClusterIP" {
		p.addf("Service type %q, want ClusterIP (the Ingress is the way in)", t)
	}

	if ing != nil {
		checkHelmIngress(&p, ing, svc.name(), svcPortNames, svcPortNumbers, want.ingressHost)
	}
	if sm != nil {
		eps := kList(sm.m, "spec", "endpoints")
		for _, ep := range eps {
			if !slices.Contains(svcPortNames, kStr(kDig(ep, "port"))) {
				p.addf("ServiceMonitor endpoint port %q is not a Service port name %v", kDig(ep, "port"), svcPortNames)
			}
			if got := kStr(kDig(ep, "path")); got != "/metrics" {
				p.addf("ServiceMonitor scrapes %q, want /metrics", got)
			}
		}
	}
	if cm != nil {
		checkConfigMapMounted(&p, cm, spec, ctr)
	}
	checkRenderedConfig(&p, ctr, cm, ing, want, dir)
	if !strings.Contains(r.notes, want.secretName) {
		p.addf("NOTES.txt does not name the Secret %q to create", want.secretName)
	}
	return p
}

// checkK8sSchema is a light kubeconform: the fields each known kind cannot do
// without. An unknown kind is a problem too, so a new template gets checks.
func checkK8sSchema(p *deployProblems, o k8sObj) {
	id := o.kind() + "/" + o.name()
	need := func(ok bool, what string) {
		if !ok {
			p.addf("%s: %s", id, what)
		}
	}
	api := kStr(o.m["apiVersion"])
	wantAPI := map[string]string{
		"Deployment": "apps/v1", "Service": "v1", "Ingress": "networking.k8s.io/v1",
		"PodDisruptionBudget": "policy/v1", "ServiceMonitor": "monitoring.coreos.com/v1", "ConfigMap": "v1",
	}[o.kind()]
	if wantAPI == "" {
		p.addf("%s: kind %s is not known to this test; add its checks", id, o.kind())
		return
	}
	need(api == wantAPI, fmt.Sprintf("apiVersion %q, want %q", api, wantAPI))
	switch o.kind() {
	case "Deployment":
		need(len(kStrings(kDig(o.m, "spec", "selector", "matchLabels"))) > 0, "spec.selector.matchLabels is empty")
		need(kMap(o.m, "spec", "template", "metadata") != nil, "spec.template.metadata missing")
		cs := kList(o.m, "spec", "template", "spec", "containers")
		need(len(cs) > 0, "spec.template.spec.containers is empty")
		for _, c := range cs {
			need(kStr(kDig(c, "name")) != "" && kStr(kDig(c, "image")) != "", "a container lacks name or image")
			for _, e := range kList(c, "env") {
				_, hasValue := kDig(e, "value").(string)
				need(kStr(kDig(e, "name")) != "", "an env entry has no name")
				need(hasValue || kDig(e, "valueFrom") != nil, fmt.Sprintf("env %v has neither a string value nor valueFrom", kDig(e, "name")))
			}
			for _, pr := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
				if probe := kMap(c, pr); probe != nil {
					need(kMap(probe, "httpGet") != nil || kMap(probe, "tcpSocket") != nil ||
						kMap(probe, "exec") != nil || kMap(probe, "grpc") != nil, pr+" has no handler")
				}
			}
		}
		volumes := map[string]bool{}
		for _, v := range kList(o.m, "spec", "template", "spec", "volumes") {
			vm, _ := v.(map[string]any)
			sources := 0
			for k, val := range vm {
				if k != "name" && val != nil {
					sources++
				}
			}
			need(sources == 1, fmt.Sprintf("volume %v needs exactly one non-empty source (emptyDir: {} rather than emptyDir:), has %d", vm["name"], sources))
			volumes[kStr(vm["name"])] = true
		}
		for _, c := range cs {
			for _, m := range kList(c, "volumeMounts") {
				need(volumes[kStr(kDig(m, "name"))], fmt.Sprintf("volumeMount %v names no volume", kDig(m, "name")))
				need(strings.HasPrefix(kStr(kDig(m, "mountPath")), "/"), fmt.Sprintf("volumeMount %v has no absolute mountPath", kDig(m, "name")))
			}
		}
	case "Service":
		ports := kList(o.m, "spec", "ports")
		need(len(ports) > 0, "spec.ports is empty")
		for _, sp := range ports {
			n, ok := kInt(kDig(sp, "port"))
			need(ok && n > 0 && n < 65536, fmt.Sprintf("port %v is not a port number", kDig(sp, "port")))
		}
	case "Ingress":
		rules := kList(o.m, "spec", "rules")
		need(len(rules) > 0, "spec.rules is empty")
		for _, r := range rules {
			for _, pth := range kList(r, "http", "paths") {
				need(slices.Contains([]string{"Prefix", "Exact", "ImplementationSpecific"}, kStr(kDig(pth, "pathType"))),
					fmt.Sprintf("path %v has pathType %v", kDig(pth, "path"), kDig(pth, "pathType")))
				need(kStr(kDig(pth, "backend", "service", "name")) != "", fmt.Sprintf("path %v has no backend service", kDig(pth, "path")))
				port := kDig(pth, "backend", "service", "port")
				_, isNum := kInt(kDig(port, "number"))
				need(kStr(kDig(port, "name")) != "" || isNum, fmt.Sprintf("path %v has no backend port name or number", kDig(pth, "path")))
			}
		}
	case "PodDisruptionBudget":
		need(len(kStrings(kDig(o.m, "spec", "selector", "matchLabels"))) > 0, "spec.selector.matchLabels is empty")
		_, minA := kMap(o.m, "spec")["minAvailable"]
		_, maxU := kMap(o.m, "spec")["maxUnavailable"]
		need(minA != maxU, "spec needs exactly one of minAvailable and maxUnavailable")
	case "ServiceMonitor":
		need(len(kStrings(kDig(o.m, "spec", "selector", "matchLabels"))) > 0, "spec.selector.matchLabels is empty")
		need(len(kList(o.m, "spec", "endpoints")) > 0, "spec.endpoints is empty")
	case "ConfigMap":
		need(len(kStrings(o.m["data"])) > 0, "data is empty")
	}
}

// checkHelmContainer checks the switchboard container and its pod.
func checkHelmContainer(p *deployProblems, spec, ctr map[string]any, want helmWant) {
	if args := kList(ctr, "args"); len(args) == 0 || kStr(args[0]) != "serve" {
		p.addf("container args %v do not start with serve", args)
	}
	if got := containerPortOf(ctr, "http"); got != 8080 {
		p.addf("container has no port named http on 8080 (got %d)", got)
	}
	for probe, pathWant := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		get := kMap(ctr, probe, "httpGet")
		if got := kStr(kDig(get, "path")); got != pathWant {
			p.addf("%s path %q, want %s", probe, got, pathWant)
		}
		if got := containerPortOf(ctr, kDig(get, "port")); got != 8080 {
			p.addf("%s port %v is not container port 8080", probe, kDig(get, "port"))
		}
	}
	res := kMap(ctr, "resources")
	for _, k := range [][]string{{"requests", "cpu"}, {"requests", "memory"}, {"limits", "memory"}} {
		if kDig(res, k...) == nil {
			p.addf("resources.%s not set", strings.Join(k, "."))
		}
	}

	// Security: not root, read-only root filesystem, and writable
	// emptyDirs where the daemon writes (data_dir, /tmp).
	podSC, ctrSC := kMap(spec, "securityContext"), kMap(ctr, "securityContext")
	if kDig(podSC, "runAsNonRoot") != true && kDig(ctrSC, "runAsNonRoot") != true {
		p.addf("runAsNonRoot is not set")
	}
	uid, ok := kInt(kDig(ctrSC, "runAsUser"))
	if !ok {
		uid, ok = kInt(kDig(podSC, "runAsUser"))
	}
	if !ok || uid == 0 {
		// The image's USER is a name: the kubelet refuses runAsNonRoot
		// without a numeric uid to check.
		p.addf("runAsUser %v: runAsNonRoot needs a numeric non-zero uid (the image's USER is a name)", uid)
	}
	if kDig(ctrSC, "readOnlyRootFilesystem") != true {
		p.addf("readOnlyRootFilesystem is not set")
	}
	if kDig(ctrSC, "allowPrivilegeEscalation") != false {
		p.addf("allowPrivilegeEscalation is not false")
	}
	checkHelmSandbox(p, spec, podSC, ctrSC, want.sandbox)
	env := map[string]map[string]any{}
	for _, e := range kList(ctr, "env") {
		em, _ := e.(map[string]any)
		name := kStr(em["name"])
		if env[name] != nil {
			p.addf("env %s is set twice", name)
		}
		env[name] = em
	}
	emptyDirs := map[string]bool{}
	for _, v := range kList(spec, "volumes") {
		if kDig(v, "emptyDir") != nil {
			emptyDirs[kStr(kDig(v, "name"))] = true
		}
	}
	dataDir := kStr(env["SWITCHBOARD_DATA_DIR"]["value"])
	if dataDir == "" {
		dataDir = "/var/lib/switchboard" // the image's ENV
	}
	for _, writable := range []string{dataDir, "/tmp"} {
		found := false
		for _, m := range kList(ctr, "volumeMounts") {
			if kStr(kDig(m, "mountPath")) == writable && emptyDirs[kStr(kDig(m, "name"))] && kDig(m, "readOnly") != true {
				found = true
			}
		}
		if !found {
			p.addf("%s is not a writable emptyDir mount (the root filesystem is read-only)", writable)
		}
	}

	// The replica is named after its pod; HTTP listens where the probes look.
	if got := kStr(kDig(env["SWITCHBOARD_REPLICA"], "valueFrom", "fieldRef", "fieldPath")); got != "metadata.name" {
		p.addf("SWITCHBOARD_REPLICA comes from %q, want fieldRef metadata.name", got)
	}
	if got := kStr(kDig(env["SWITCHBOARD_HTTP_LISTEN"], "value")); got != "0.0.0.0:8080" {
		p.addf("SWITCHBOARD_HTTP_LISTEN %q, want 0.0.0.0:8080", got)
	}

	// Credentials come from the Secret, never as literals.
	secretMounts := map[string]map[string]bool{} // mount path → item paths (nil: all keys)
	secretVolumes := map[string]map[string]bool{}
	for _, v := range kList(spec, "volumes") {
		if name := kStr(kDig(v, "secret", "secretName")); name != "" {
			if name != want.secretName {
				p.addf("secret volume %v uses Secret %q, want %q", kDig(v, "name"), name, want.secretName)
			}
			var items map[string]bool
			for _, it := range kList(v, "secret", "items") {
				if items == nil {
					items = map[string]bool{}
				}
				items[kStr(kDig(it, "path"))] = true
			}
			secretVolumes[kStr(kDig(v, "name"))] = items
		}
	}
	for _, m := range kList(ctr, "volumeMounts") {
		if items, ok := secretVolumes[kStr(kDig(m, "name"))]; ok {
			if kDig(m, "readOnly") != true {
				p.addf("the Secret's mount %v is not readOnly", kDig(m, "mountPath"))
			}
			secretMounts[kStr(kDig(m, "mountPath"))] = items
		}
	}
	envFromSecret := false
	for _, ef := range kList(ctr, "envFrom") {
		if kStr(kDig(ef, "secretRef", "name")) == want.secretName {
			envFromSecret = true
		}
	}
	fromSecret := func(name string) bool {
		if kStr(kDig(env[name], "valueFrom", "secretKeyRef", "name")) == want.secretName {
			return true
		}
		if f := kStr(kDig(env[name+"_FILE"], "value")); f != "" {
			items, ok := secretMounts[path.Dir(f)]
			return ok && (items == nil || items[path.Base(f)])
		}
		return envFromSecret
	}
	for name, e := range env {
		if strings.HasSuffix(name, "_FILE") && strings.HasPrefix(name, "SWITCHBOARD_") && !fromSecret(strings.TrimSuffix(name, "_FILE")) {
			p.addf("%s=%v is not a key of the mounted Secret %q", name, e["value"], want.secretName)
		}
	}
	for _, name := range []string{"SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_REDIS_URL"} {
		if !fromSecret(name) {
			p.addf("%s does not come from the Secret %q: replicas share work only through one PostgreSQL and one Redis", name, want.secretName)
		}
	}
	for name, e := range env {
		v, literal := e["value"].(string)
		if !literal {
			continue
		}
		if isSecretEnv(name) {
			p.addf("env %s is a credential given as a literal value; use the Secret", name)
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if _, hasPassword := u.User.Password(); hasPassword {
				p.addf("env %s holds a URL with a password", name)
			}
		}
	}
}

// checkHelmSandbox checks that with execSandbox on the pod lets bubblewrap
// build the exec sandbox: a user namespace of the pod's own, an unmasked
// /proc and seccomp and AppArmor profiles that allow unshare and mount.
func checkHelmSandbox(p *deployProblems, spec, podSC, ctrSC map[string]any, on bool) {
	if !on {
		if kDig(ctrSC, "procMount") != nil || kDig(spec, "hostUsers") != nil {
			p.addf("execSandbox is off but the pod sets procMount or hostUsers")
		}
		return
	}
	if kDig(spec, "hostUsers") != false {
		p.addf("execSandbox: hostUsers is %v, want false (procMount Unmasked needs the pod's own user namespace)", kDig(spec, "hostUsers"))
	}
	if got := kStr(kDig(ctrSC, "procMount")); got != "Unmasked" {
		p.addf("execSandbox: procMount %q, want Unmasked: a masked /proc refuses bubblewrap a /proc of its own", got)
	}
	for _, prof := range []string{"seccompProfile", "appArmorProfile"} {
		typ := kStr(kDig(ctrSC, prof, "type"))
		if typ == "" {
			typ = kStr(kDig(podSC, prof, "type"))
		}
		if typ != "Unconfined" && typ != "Localhost" {
			p.addf("execSandbox: %s type %q refuses bubblewrap's unshare or mount; want Unconfined or a Localhost profile", prof, typ)
		}
	}
}

// isSecretEnv reports whether the daemon counts the variable name as
// a credential (config's secret:"true" keys), asked of config itself.
func isSecretEnv(name string) bool {
	if !strings.HasPrefix(name, "SWITCHBOARD_") {
		return false
	}
	const probe = "probe-value-3f9c"
	cfg, err := config.Load(config.LoadOptions{File: os.DevNull, Environ: []string{name + "=" + probe}})
	return err == nil && slices.Contains(cfg.Secrets(), probe)
}

func checkHelmIngress(p *deployProblems, ing *k8sObj, svcName string, svcPortNames []string, svcPortNumbers []int, host string) {
	rules := kList(ing.m, "spec", "rules")
	webhooks := false
	for _, r := range rules {
		if got := kStr(kDig(r, "host")); got != host {
			p.addf("Ingress rule host %q, want %q", got, host)
		}
		for _, pth := range kList(r, "http", "paths") {
			pv := kStr(kDig(pth, "path"))
			if !strings.HasPrefix(pv, "/webhooks") {
				p.addf("Ingress exposes %q: only /webhooks/ belongs outside (not /metrics, /readyz, /api/v1)", pv)
			}
			if pv == "/webhooks/" || pv == "/webhooks" {
				webhooks = kStr(kDig(pth, "pathType")) == "Prefix"
			}
			if got := kStr(kDig(pth, "backend", "service", "name")); got != svcName {
				p.addf("Ingress path %s goes to Service %q, want %q", pv, got, svcName)
			}
			port := kDig(pth, "backend", "service", "port")
			n, isNum := kInt(kDig(port, "number"))
			if !slices.Contains(svcPortNames, kStr(kDig(port, "name"))) && !(isNum && slices.Contains(svcPortNumbers, n)) {
				p.addf("Ingress path %s goes to port %v, which the Service does not have (%v %v)", pv, port, svcPortNames, svcPortNumbers)
			}
		}
	}
	if !webhooks {
		p.addf("Ingress does not route the prefix /webhooks/ to the Service")
	}
	for _, tls := range kList(ing.m, "spec", "tls") {
		hosts := kList(tls, "hosts")
		if !slices.Contains(hosts, any(host)) || kStr(kDig(tls, "secretName")) == "" {
			p.addf("Ingress tls %v does not cover %s with a secretName", tls, host)
		}
	}
}

func checkConfigMapMounted(p *deployProblems, cm *k8sObj, spec, ctr map[string]any) {
	args := kList(ctr, "args")
	i := slices.Index(args, any("--config"))
	if i < 0 || i+1 >= len(args) {
		p.addf("the ConfigMap's file is not passed with --config: args %v", args)
		return
	}
	file := kStr(args[i+1])
	for _, v := range kList(spec, "volumes") {
		if kStr(kDig(v, "configMap", "name")) != cm.name() {
			continue
		}
		for _, m := range kList(ctr, "volumeMounts") {
			if kStr(kDig(m, "name")) == kStr(kDig(v, "name")) && path.Dir(file) == kStr(kDig(m, "mountPath")) &&
				kDig(cm.m, "data", path.Base(file)) != nil {
				return
			}
		}
	}
	p.addf("--config %s is not a key of ConfigMap %s mounted at its folder", file, cm.name())
}

// checkRenderedConfig loads the configuration the pod would see (its
// environment, the Secret's files with made-up values, the ConfigMap's
// file) with config.Load and validates it.
func checkRenderedConfig(p *deployProblems, ctr map[string]any, cm, ing *k8sObj, want helmWant, dir string) {
	fake := map[string]string{
		"SWITCHBOARD_DATABASE_URL":            "postgres://switchboard:pw@postgres.db:5432/switchboard",
		"SWITCHBOARD_REDIS_URL":               "redis://redis.db:6379/0",
		"SWITCHBOARD_TELEGRAM_WEBHOOK_SECRET": "s3cret_token-1",
		"SWITCHBOARD_TELEGRAM_TOKEN":          "123456:ABCDEF",
	}
	var environ []string
	for _, e := range kList(ctr, "env") {
		name := kStr(kDig(e, "name"))
		value, literal := kDig(e, "value").(string)
		switch {
		case kStr(kDig(e, "valueFrom", "fieldRef", "fieldPath")) == "metadata.name":
			value = helmPodName
		case kDig(e, "valueFrom", "secretKeyRef") != nil:
			value = orDefault(fake[name], "fake-"+name)
		case strings.HasSuffix(name, "_FILE") && literal:
			file := filepath.Join(dir, "secrets", path.Base(value))
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				p.addf("%v", err)
				return
			}
			setting := strings.TrimSuffix(name, "_FILE")
			if err := os.WriteFile(file, []byte(orDefault(fake[setting], "fake-"+setting)+"\n"), 0o600); err != nil {
				p.addf("%v", err)
				return
			}
			value = file
		case !literal:
			p.addf("env %s: unexpected valueFrom %v", name, kDig(e, "valueFrom"))
			continue
		}
		environ = append(environ, name+"="+value)
	}
	file := os.DevNull
	if cm != nil {
		for _, content := range kStrings(cm.m["data"]) {
			file = filepath.Join(dir, "switchboard.yaml")
			if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
				p.addf("%v", err)
				return
			}
		}
	}
	cfg, err := config.Load(config.LoadOptions{File: file, Environ: environ})
	if err != nil {
		p.addf("the pod's configuration does not load: %v", err)
		return
	}
	for _, w := range cfg.EnvWarnings() {
		p.addf("the pod's environment: %s", w)
	}
	if cfg.Replica != helmPodName {
		p.addf("replica is %q, want the pod name", cfg.Replica)
	}
	if cfg.Database.URL != fake["SWITCHBOARD_DATABASE_URL"] || cfg.Redis.URL != fake["SWITCHBOARD_REDIS_URL"] {
		p.addf("database.url %q / redis.url %q do not come from the Secret", cfg.Database.URL, cfg.Redis.URL)
	}
	if cfg.Telegram.Mode != orDefault(want.telegramMode, "polling") {
		p.addf("telegram.mode %q, want %q", cfg.Telegram.Mode, orDefault(want.telegramMode, "polling"))
	}
	if cfg.Telegram.Mode == "webhook" && ing != nil {
		if u, err := url.Parse(cfg.Telegram.WebhookURL); err != nil || u.Host != want.ingressHost || !strings.HasPrefix(u.Path, "/webhooks/") {
			p.addf("telegram.webhook_url %q is not under the Ingress's https://%s/webhooks/", cfg.Telegram.WebhookURL, want.ingressHost)
		}
	}
	if err := cfg.Validate(); err != nil {
		p.addf("the pod's configuration is invalid: %v", err)
	}
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// containerPortOf returns the container port a probe or Service port names
// (by name or number), or 0.
func containerPortOf(ctr map[string]any, port any) int {
	if n, ok := kInt(port); ok {
		for _, cp := range kList(ctr, "ports") {
			if m, _ := kInt(kDig(cp, "containerPort")); m == n {
				return n
			}
		}
		return 0
	}
	for _, cp := range kList(ctr, "ports") {
		if kStr(kDig(cp, "name")) == kStr(port) {
			n, _ := kInt(kDig(cp, "containerPort"))
			return n
		}
	}
	return 0
}

func antiAffinityTerms(spec map[string]any) []any {
	var out []any
	for _, t := range kList(spec, "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution") {
		out = append(out, kDig(t, "podAffinityTerm"))
	}
	out = append(out, kList(spec, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")...)
	return out
}

func kStrings(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, val := range m {
		out[k] = fmt.Sprint(val)
	}
	return out
}

func checkK8sStrings(p *deployProblems, what string, v any) {
	if v == nil {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.addf("%s is not a map: %v", what, v)
		return
	}
	for k, val := range m {
		if _, ok := val.(string); !ok {
			p.addf("%s[%s] = %v is not a string (quote it)", what, k, val)
		}
	}
}

func checkK8sLabels(p *deployProblems, what string, v any) {
	checkK8sStrings(p, what, v)
	for k, val := range kStrings(v) {
		if len(val) > 63 || !labelValue.MatchString(val) {
			p.addf("%s[%s] = %q is not a valid label value", what, k, val)
		}
	}
}

func labelsSubset(small, big map[string]string) bool {
	for k, v := range small {
		if big[k] != v {
			return false
		}
	}
	return true
}

func labelsEqual(a, b map[string]string) bool { return len(a) == len(b) && labelsSubset(a, b) }

// helmAllOn turns every option on.
var helmAllOn = map[string]any{
	"ingress": map[string]any{
		"enabled": true, "className": "nginx", "host": "bot.example.com",
		"annotations": map[string]any{"cert-manager.io/cluster-issuer": "letsencrypt"},
	},
	"serviceMonitor":      map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
	"podDisruptionBudget": map[string]any{"enabled": true, "minAvailable": 1},
	"topologySpread":      map[string]any{"enabled": true},
	"podAntiAffinity":     "required",
	"existingSecret":      "switchboard-credentials",
	"config": map[string]any{
		"telegram": map[string]any{"mode": "webhook"},
		"llm":      map[string]any{"provider": "openai", "baseURL": "http://ollama.llm:11434/v1", "model": "llama3.2"},
		"admins":   []any{"telegram:123456789", "slack:U0123"},
	},
	"secretFiles": map[string]any{
		"SWITCHBOARD_TELEGRAM_WEBHOOK_SECRET": "telegram-webhook-secret",
		"SWITCHBOARD_HTTP_ADMIN_TOKEN":        "http-admin-token",
	},
	"env":            map[string]any{"SWITCHBOARD_ACCESS_MODE": "request", "SWITCHBOARD_DATABASE_MAX_CONNS": 8},
	"podAnnotations": map[string]any{"example.com/team": "chat"},
	"configFile":     "agent:\n  name: assistant\nagents:\n  - name: ops\n    description: on-call helper\n",
	"execSandbox":    map[string]any{"enabled": true},
}

var helmAllOnWant = helmWant{replicas: 3, secretName: "switchboard-credentials", ingressHost: "bot.example.com",
	serviceMonitor: true, pdb: true, configFile: true, telegramMode: "webhook", sandbox: true}

func TestHelmChartMeta(t *testing.T) {
	c := loadHelmChart(t)
	meta := c.Metadata
	for _, f := range []struct{ key, got, want string }{
		{"apiVersion", meta.APIVersion, "v2"}, {"name", meta.Name, "switchboard"}, {"version", meta.Version, "0.1.0"},
	} {
		if f.got != f.want {
			t.Errorf("Chart.yaml %s = %q, want %q", f.key, f.got, f.want)
		}
	}
	if meta.AppVersion == "" {
		t.Error("Chart.yaml has no appVersion (quoted, it is a string)")
	}
	for _, f := range []string{"_helpers.tpl", "deployment.yaml", "service.yaml", "ingress.yaml", "pdb.yaml", "servicemonitor.yaml", "NOTES.txt"} {
		if c.source("templates/"+f) == "" {
			t.Errorf("templates/%s is missing", f)
		}
	}
	values := c.Values
	if n, _ := kInt(values["replicaCount"]); n != 3 {
		t.Errorf("replicaCount %v, want 3", values["replicaCount"])
	}
	for _, k := range [][]string{{"ingress", "enabled"}, {"serviceMonitor", "enabled"}} {
		if kDig(values, k...) != false {
			t.Errorf("%s must default to false", strings.Join(k, "."))
		}
	}
	if kDig(values, "podDisruptionBudget", "enabled") != true {
		t.Error("podDisruptionBudget.enabled must default to true")
	}
}

func TestHelmChartRenders(t *testing.T) {
	c := loadHelmChart(t)
	cases := []struct {
		name      string
		overrides map[string]any
		want      helmWant
	}{
		{"defaults", nil, helmWant{replicas: 3, secretName: helmRelease + "-switchboard", pdb: true}},
		{"all options", helmAllOn, helmAllOnWant},
		{"five replicas, no PDB, webhook URL given", map[string]any{
			"replicaCount":        5,
			"podDisruptionBudget": map[string]any{"enabled": false},
			"podAntiAffinity":     "none",
			"dataDir":             map[string]any{"sizeLimit": ""},
			"tmpDir":              map[string]any{"sizeLimit": ""},
			"config":              map[string]any{"telegram": map[string]any{"mode": "webhook", "webhookURL": "https://hooks.example.org/webhooks/telegram"}},
			"secretFiles":         map[string]any{"SWITCHBOARD_TELEGRAM_WEBHOOK_SECRET": "telegram-webhook-secret"},
		}, helmWant{replicas: 5, secretName: helmRelease + "-switchboard", telegramMode: "webhook"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.render(t.Context(), tc.overrides)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			for _, pr := range checkHelmObjects(r, tc.want, t.TempDir()) {
				t.Error(pr)
			}
			if t.Failed() {
				for _, o := range r.objs {
					b, _ := yaml.Marshal(o.m)
					t.Logf("--- %s\n%s", o.file, b)
				}
			}
		})
	}
}

// TestHelmChartRefuses: settings that cannot work fail at render time with
// a message that says what to set.
func TestHelmChartRefuses(t *testing.T) {
	c := loadHelmChart(t)
	for _, tc := range []struct {
		overrides map[string]any
		want      string
	}{
		{map[string]any{"config": map[string]any{"telegram": map[string]any{"mode": "webhook"}}}, "webhookURL"},
		{map[string]any{"ingress": map[string]any{"enabled": true}}, "ingress.host"},
	} {
		_, err := c.render(t.Context(), tc.overrides)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("render %v: err %v, want one naming %s", tc.overrides, err, tc.want)
		}
	}
}

// TestHelmChecksCatchBrokenCharts breaks the chart in the ways that would
// hurt in a cluster and expects the checks above to notice each one.
func TestHelmChecksCatchBrokenCharts(t *testing.T) {
	base := loadHelmChart(t)
	for _, tc := range []struct {
		name      string
		file      string // "values.yaml" or a template; "" with overrides only
		old, new  string
		overrides map[string]any
		want      string // in one of the problems
		adjust    func(*helmWant)
	}{
		{"pod labels lose the selector", "templates/deployment.yaml",
			`{{- include "switchboard.selectorLabels" . | nindent 8 }}`, `app: switchboard`, nil, "pod template labels", nil},
		{"service selects by name only", "templates/service.yaml",
			`{{- include "switchboard.selectorLabels" . | nindent 4 }}`, `app.kubernetes.io/name: switchboard`, nil, "Service selector", nil},
		{"PDB selector drifts", "templates/pdb.yaml",
			`{{- include "switchboard.selectorLabels" . | nindent 6 }}`, `app.kubernetes.io/instance: other`, nil, "PodDisruptionBudget selector", nil},
		{"selector without the instance", "templates/_helpers.tpl",
			"app.kubernetes.io/instance: {{ .Release.Name }}\n", "", nil, "lacks app.kubernetes.io/instance", nil},
		{"readiness on /healthz", "values.yaml",
			"httpGet: {path: /readyz, port: http}", "httpGet: {path: /healthz, port: http}", nil, "readinessProbe path", nil},
		{"liveness on a port nobody listens on", "values.yaml",
			"httpGet: {path: /healthz, port: http}\n  periodSeconds: 10", "httpGet: {path: /healthz, port: 9090}\n  periodSeconds: 10", nil, "livenessProbe port", nil},
		{"replica from the namespace", "templates/deployment.yaml",
			"fieldPath: metadata.name", "fieldPath: metadata.namespace", nil, "SWITCHBOARD_REPLICA", nil},
		{"listen on loopback", "templates/deployment.yaml",
			`value: "0.0.0.0:8080"`, `value: "127.0.0.1:8080"`, nil, "SWITCHBOARD_HTTP_LISTEN", nil},
		{"short grace period", "values.yaml",
			"terminationGracePeriodSeconds: 20", "terminationGracePeriodSeconds: 5", nil, "terminationGracePeriodSeconds", nil},
		{"two replicas by default", "values.yaml", "replicaCount: 3", "replicaCount: 2", nil, "replicas", nil},
		{"no resources", "values.yaml", "resources:\n  requests:\n    cpu: 50m\n    memory: 64Mi\n  limits:\n    memory: 256Mi\n", "resources: {}\n", nil, "resources.requests.cpu", nil},
		{"literal token", "", "", "", map[string]any{"env": map[string]any{"SWITCHBOARD_TELEGRAM_TOKEN": "123:abc"}}, "literal", nil},
		{"password in a URL", "", "", "", map[string]any{"config": map[string]any{"llm": map[string]any{"baseURL": "https://u:pw@llm.example.com/v1"}}}, "password", nil},
		{"database URL not from the Secret", "", "", "", map[string]any{"secretFiles": map[string]any{"SWITCHBOARD_DATABASE_URL": nil}}, "SWITCHBOARD_DATABASE_URL does not come from the Secret", nil},
		{"secret file outside the mount", "templates/deployment.yaml",
			`printf "%s/%s" $.Values.secretMountPath $key`, `printf "/etc/%s" $key`, nil, "not a key of the mounted Secret", nil},
		{"secret volume of another Secret", "templates/deployment.yaml",
			`secretName: {{ include "switchboard.secretName" . }}`, `secretName: switchboard`, nil, "uses Secret", nil},
		{"misspelt setting", "", "", "", map[string]any{"env": map[string]any{"SWITCHBOARD_TELEGRAM_MOD": "webhook"}}, "not a setting", nil},
		{"writable root filesystem", "values.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", nil, "readOnlyRootFilesystem", nil},
		{"no numeric uid", "values.yaml", "  runAsUser: 10001\n", "", nil, "runAsUser", nil},
		{"no /tmp", "templates/deployment.yaml", "            - name: tmp\n              mountPath: /tmp\n", "", nil, "/tmp is not a writable emptyDir", nil},
		{"null emptyDir", "templates/deployment.yaml", "          emptyDir: {}\n          {{- end }}\n        - name: tmp", "          emptyDir:\n          {{- end }}\n        - name: tmp",
			map[string]any{"dataDir": map[string]any{"sizeLimit": ""}}, "exactly one non-empty source", nil},
		{"unquoted numeric label", "templates/_helpers.tpl", `{{ .Values.image.tag | default .Chart.AppVersion | quote }}`, `{{ .Values.image.tag | default .Chart.AppVersion }}`,
			map[string]any{"image": map[string]any{"tag": "1.5"}}, "is not a string", nil},
		{"ingress exposes everything", "templates/ingress.yaml", "path: /webhooks/", "path: /", nil, "Ingress exposes", nil},
		{"ingress to a missing port", "templates/ingress.yaml", "name: http", "name: web", nil, "which the Service does not have", nil},
		{"ingress to another service", "templates/ingress.yaml",
			"                name: {{ include \"switchboard.fullname\" . }}", "                name: switchboard", nil, "goes to Service", nil},
		{"ingress always on", "templates/ingress.yaml", "{{- if .Values.ingress.enabled }}", "{{- if true }}",
			map[string]any{"ingress": map[string]any{"enabled": false, "host": "bot.example.com"}, "config": map[string]any{"telegram": map[string]any{"mode": "polling"}}}, "want no Ingress",
			func(w *helmWant) { w.ingressHost, w.telegramMode = "", "polling" }},
		{"service monitor always on", "templates/servicemonitor.yaml", "{{- if .Values.serviceMonitor.enabled }}", "{{- if true }}",
			map[string]any{"serviceMonitor": map[string]any{"enabled": false}}, "want no ServiceMonitor",
			func(w *helmWant) { w.serviceMonitor = false }},
		{"service monitor path", "templates/servicemonitor.yaml", "path: /metrics", "path: /metric", nil, "want /metrics", nil},
		{"PDB blocks drains", "", "", "", map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": 3}}, "blocks every drain", nil},
		{"config file not mounted", "templates/deployment.yaml", "            - name: config\n              mountPath: /etc/switchboard\n              readOnly: true\n", "", nil, "mounted at its folder", nil},
		{"webhook URL off the ingress", "templates/_helpers.tpl", `"https://%s/webhooks/telegram"`, `"https://%s/telegram"`, nil, "telegram.webhook_url", nil},
		{"sandbox without a user namespace", "templates/deployment.yaml", "      hostUsers: false\n", "", nil, "hostUsers is <nil>, want false", nil},
		{"sandbox with the masked /proc", "templates/deployment.yaml", `"procMount" "Unmasked" `, "", nil, "procMount \"\", want Unmasked", nil},
		{"sandbox under the default seccomp profile", "", "", "", map[string]any{"execSandbox": map[string]any{"seccompProfile": map[string]any{"type": "RuntimeDefault"}}}, "seccompProfile type \"RuntimeDefault\"", nil},
		{"unknown kind", "templates/extra.yaml", "", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: sb-extra\n  namespace: chat\n", nil, "not known to this test", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base.clone()
			overrides := mergeHelmValues(mergeHelmValues(map[string]any{}, helmAllOn), tc.overrides)
			want := helmAllOnWant
			if tc.adjust != nil {
				tc.adjust(&want)
			}
			if tc.file != "" {
				src := tc.new
				if tc.old != "" {
					if src = c.source(tc.file); !strings.Contains(src, tc.old) {
						t.Fatalf("%s no longer contains %q: update this case", tc.file, tc.old)
					}
					src = strings.Replace(src, tc.old, tc.new, 1)
				}
				if err := c.setSource(tc.file, src); err != nil {
					t.Fatal(err)
				}
			}
			r, err := c.render(t.Context(), overrides)
			if err != nil {
				t.Fatalf("the broken chart does not render, so this case tests nothing: %v", err)
			}
			got := checkHelmObjects(r, want, t.TempDir())
			for _, pr := range got {
				if strings.Contains(pr, tc.want) {
					return
				}
			}
			t.Errorf("no problem mentions %q; got %q", tc.want, got)
		})
	}
}
