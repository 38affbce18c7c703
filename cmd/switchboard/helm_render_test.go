package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
)

// The Helm chart (deploy/helm/switchboard) cannot be installed here (no
// cluster), so these tests load and render it with Helm's own library, as
// `helm template` does, and parse what comes out; helm_test.go checks the
// objects.

const (
	helmChartDir  = "deploy/helm/switchboard"
	helmRelease   = "sb"
	helmNamespace = "chat"
	// helmKubeVersion is the version .Capabilities reports: Helm's default
	// in a test binary (v1.20) predates fields the chart sets (hostUsers).
	helmKubeVersion = "v1.31.0"
	// helmPodName stands in for the pod name the kubelet puts into
	// SWITCHBOARD_REPLICA.
	helmPodName = "sb-switchboard-5d8f7c9b4-x2k7q"
)

// helmChart is the chart as Helm loads it; a test may break a clone.
type helmChart struct {
	*chart.Chart
}

func loadHelmChart(t *testing.T) *helmChart {
	t.Helper()
	ch, err := loader.Load(filepath.Join("..", "..", helmChartDir))
	if err != nil {
		t.Fatalf("load %s: %v", helmChartDir, err)
	}
	if len(ch.Dependencies()) > 0 {
		t.Fatalf("%s has subcharts; render and check them too", helmChartDir)
	}
	return &helmChart{ch}
}

// clone returns a copy whose files and values a test may change.
func (c *helmChart) clone() *helmChart {
	d := *c.Chart
	d.Templates = cloneFiles(c.Templates)
	d.Raw = cloneFiles(c.Raw)
	return &helmChart{&d}
}

func cloneFiles(files []*common.File) []*common.File {
	out := make([]*common.File, len(files))
	for i, f := range files {
		g := *f
		g.Data = slices.Clone(f.Data)
		out[i] = &g
	}
	return out
}

// source returns the text of values.yaml or of a template
// ("templates/deployment.yaml"), "" if the chart has no such file.
func (c *helmChart) source(name string) string {
	if f := c.file(name); f != nil {
		return string(f.Data)
	}
	return ""
}

// setSource replaces the text of values.yaml or of a template, adding a
// template the chart does not have, as if the file read so on disk.
func (c *helmChart) setSource(name, text string) error {
	if name == "values.yaml" {
		vals, err := loader.LoadValues(strings.NewReader(text))
		if err != nil {
			return fmt.Errorf("values.yaml: %w", err)
		}
		c.Values = vals
	}
	if f := c.file(name); f != nil {
		f.Data = []byte(text)
		return nil
	}
	if name == "values.yaml" {
		return errors.New("the chart was loaded without values.yaml")
	}
	c.Templates = append(c.Templates, &common.File{Name: name, Data: []byte(text)})
	return nil
}

// file finds a template by name, or values.yaml among the raw files.
func (c *helmChart) file(name string) *common.File {
	files := c.Templates
	if name == "values.yaml" {
		files = c.Raw
	}
	for _, f := range files {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// helmRender is one rendering: every object of every manifest template,
// and NOTES.txt.
type helmRender struct {
	objs  []k8sObj
	notes string
}

// k8sObj is one rendered object and the template it came from.
type k8sObj struct {
	file string
	m    map[string]any
}

func (o k8sObj) kind() string { return kStr(o.m["kind"]) }
func (o k8sObj) name() string { return kStr(kDig(o.m, "metadata", "name")) }

// render renders the chart like `helm template sb deploy/helm/switchboard
// -n chat -f overrides.yaml`. Unlike `helm template` it fails on a
// reference to a value values.yaml does not define (the engine's strict
// mode, as `helm lint --strict`), so a misspelt value cannot quietly
// render as empty.
func (c *helmChart) render(ctx context.Context, overrides map[string]any) (*helmRender, error) {
	kube, err := common.ParseKubeVersion(helmKubeVersion)
	if err != nil {
		return nil, fmt.Errorf("kube version: %w", err)
	}
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kube
	vals, err := util.ToRenderValues(c.Chart, overrides,
		common.ReleaseOptions{Name: helmRelease, Namespace: helmNamespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Engine{Strict: true}.RenderWithContext(ctx, c.Chart, vals)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	out := &helmRender{}
	for _, name := range names {
		if err := out.add(strings.TrimPrefix(name, c.Name()+"/"), files[name]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// add takes in one rendered template: NOTES.txt, or a manifest of YAML
// documents.
func (r *helmRender) add(name, text string) error {
	base := path.Base(name)
	if base == "NOTES.txt" {
		r.notes = text
		return nil
	}
	if ext := path.Ext(base); ext != ".yaml" && ext != ".yml" {
		return fmt.Errorf("%s: Helm renders it as a manifest; this test expects only .yaml there", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
	for i := 1; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s, document %d is not YAML: %w\n%s", name, i, err, numberedLines(text))
		}
		if m != nil {
			r.objs = append(r.objs, k8sObj{file: name, m: m})
		}
	}
}

// numberedLines prefixes lines with their numbers, for error messages.
func numberedLines(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%4d  %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}

// mergeHelmValues merges src over dst like Helm merges two --values files:
// maps merge, anything else replaces, and a null stays, so that it deletes
// the key from values.yaml at render time.
func mergeHelmValues(dst, src map[string]any) map[string]any {
	return loader.MergeMaps(dst, src)
}

func kDig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func kMap(v any, keys ...string) map[string]any {
	m, _ := kDig(v, keys...).(map[string]any)
	return m
}

func kList(v any, keys ...string) []any {
	l, _ := kDig(v, keys...).([]any)
	return l
}

func kStr(v any) string {
	s, _ := v.(string)
	return s
}

func kInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}
