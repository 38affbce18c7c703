package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/tools/scrub"
)

// probe is a tool that reports what it saw.
type probe struct {
	out   string
	panic bool
}

func (probe) Name() string                { return "probe" }
func (probe) Description() string         { return "test tool" }
func (probe) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (probe) SideEffect() SideEffect      { return SideEffectNone }
func (p probe) Execute(ctx context.Context, args json.RawMessage) Result {
	if p.panic {
		panic("boom")
	}
	c, _ := CallFrom(ctx)
	return Result{ForLLM: p.out + " session=" + c.Session + " chat=" + c.ChatID + " args=" + string(args), ForUser: p.out}
}

type limiter struct {
	allow bool
	err   error
	keys  []string
}

func (l *limiter) Allow(_ context.Context, key string) (bool, error) {
	l.keys = append(l.keys, key)
	return l.allow, l.err
}

func TestRegistryExecuteInjectsContextAndScrubs(t *testing.T) {
	var observed []string
	r := NewRegistry(RegistryOptions{
		Scrubber: scrub.New("top-secret-value"),
		Observe:  func(tool string, _ time.Duration, isErr bool) { observed = append(observed, tool) },
	})
	if err := r.Register(probe{out: "leak top-secret-value"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(probe{}); err == nil {
		t.Fatal("registering a name twice must fail")
	}
	res := r.Execute(context.Background(), Call{Session: "s1", ChatID: "c1"}, "probe", nil)
	if res.IsError {
		t.Fatalf("unexpected error: %+v", res)
	}
	for _, want := range []string{"session=s1", "chat=c1", "args={}"} {
		if !strings.Contains(res.ForLLM, want) {
			t.Errorf("ForLLM %q lacks %q", res.ForLLM, want)
		}
	}
	if strings.Contains(res.ForLLM, "top-secret-value") || strings.Contains(res.ForUser, "top-secret-value") {
		t.Errorf("result not scrubbed: %+v", res)
	}
	if len(observed) != 1 || observed[0] != "probe" {
		t.Errorf("observe = %v", observed)
	}
}

func TestRegistryRateLimitAndFailures(t *testing.T) {
	l := &limiter{allow: false}
	r := NewRegistry(RegistryOptions{RateLimiter: l})
	_ = r.Register(probe{out: "ran"})
	res := r.Execute(context.Background(), Call{Session: "s9"}, "probe", nil)
	if !res.IsError || strings.Contains(res.ForLLM, "ran") || !strings.Contains(res.ForLLM, "rate limit") {
		t.Fatalf("rate-limited call = %+v", res)
	}
	if len(l.keys) != 1 || l.keys[0] != "s9" {
		t.Fatalf("limiter keyed by %v, want the session", l.keys)
	}
	l.err = errors.New("redis down")
	if res := r.Execute(context.Background(), Call{Session: "s9"}, "probe", nil); !res.IsError {
		t.Fatalf("limiter failure must not run the tool: %+v", res)
	}
	if res := r.Execute(context.Background(), Call{}, "nope", nil); !res.IsError || !strings.Contains(res.ForLLM, "unknown tool") {
		t.Fatalf("unknown tool = %+v", res)
	}
	r2 := NewRegistry(RegistryOptions{})
	_ = r2.Register(probe{panic: true})
	if res := r2.Execute(context.Background(), Call{}, "probe", nil); !res.IsError || strings.Contains(res.ForLLM, "boom") {
		t.Fatalf("panicking tool = %+v", res)
	}
}

func TestRegistrySpecsFilteredAndSorted(t *testing.T) {
	r := NewRegistry(RegistryOptions{})
	_ = r.Register(probe{})
	_ = r.Register(Datetime{})
	all := r.Specs(nil)
	if len(all) != 2 || all[0].Name != "datetime" || all[1].Name != "probe" {
		t.Fatalf("specs = %+v", all)
	}
	only := r.Specs(func(t Tool) bool { return t.Name() == "probe" })
	if len(only) != 1 || only[0].Name != "probe" {
		t.Fatalf("filtered specs = %+v", only)
	}
}

// described counts how often the registry asks for its description.
type described struct {
	probe
	asked *int
}

func (d described) Name() string { return "described" }
func (d described) Description() string {
	*d.asked++
	return "counted"
}

func TestRegistrySpecsDescribeEachToolOncePerVersion(t *testing.T) {
	r := NewRegistry(RegistryOptions{})
	asked := 0
	_ = r.Register(described{asked: &asked})
	for range 3 {
		if specs := r.Specs(nil); len(specs) != 1 || specs[0].Description != "counted" {
			t.Fatalf("specs = %+v", specs)
		}
	}
	if asked != 1 {
		t.Errorf("three runs asked for the description %d times, want once", asked)
	}
	_ = r.Register(probe{})
	if specs := r.Specs(nil); len(specs) != 2 || specs[1].Name != "probe" {
		t.Fatalf("after Register: specs = %+v, want the new tool too", specs)
	}
	r.Unregister("described")
	if specs := r.Specs(nil); len(specs) != 1 || specs[0].Name != "probe" {
		t.Fatalf("after Unregister: specs = %+v, want only probe", specs)
	}
}

func TestDatetime(t *testing.T) {
	fixed := time.Date(2026, 11, 22, 0, 26, 0, 0, time.UTC)
	d := Datetime{Now: func() time.Time { return fixed }}
	res := d.Execute(context.Background(), json.RawMessage(`{"timezone":"Asia/Ho_Chi_Minh"}`))
	if res.IsError || !strings.HasPrefix(res.ForLLM, "2026-11-22T07:26:00+07:00") {
		t.Fatalf("datetime = %+v", res)
	}
	if res := d.Execute(context.Background(), json.RawMessage(`{"timezone":"Mars/Base"}`)); !res.IsError {
		t.Fatalf("bad zone accepted: %+v", res)
	}
	if res := d.Execute(context.Background(), json.RawMessage(`[1]`)); !res.IsError {
		t.Fatalf("bad args accepted: %+v", res)
	}
}
