package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/tools"
)

// cronApprover records what the cron tool asks and answers with a fixed
// decision.
type cronApprover struct {
	mu         sync.Mutex
	decision   tools.Decision
	always     map[string]bool
	approveErr error
	asked      []string // tool + "\x00" + pattern of AlwaysAllowed calls
	requests   []tools.ApprovalRequest
}

func (a *cronApprover) AlwaysAllowed(_ context.Context, tool, pattern string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, tool+"\x00"+pattern)
	return a.always[pattern], nil
}

func (a *cronApprover) Approve(_ context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, req)
	return a.decision, a.approveErr
}

func (a *cronApprover) calls() (asked int, requests []tools.ApprovalRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked), append([]tools.ApprovalRequest(nil), a.requests...)
}

// fakeCronStore keeps jobs in memory; with validate set it is also a
// tools.CronValidator.
type fakeCronStore struct {
	mu        sync.Mutex
	jobs      map[string]tools.CronJob
	createdBy map[string]string
	createErr error
}

func newFakeCronStore(jobs ...tools.CronJob) *fakeCronStore {
	s := &fakeCronStore{jobs: map[string]tools.CronJob{}, createdBy: map[string]string{}}
	for _, j := range jobs {
		s.jobs[j.Name] = j
	}
	return s
}

func (s *fakeCronStore) CreateJob(_ context.Context, j tools.CronJob, createdBy string) (tools.CronJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.createErr != nil {
		return tools.CronJob{}, s.createErr
	}
	j.Source, j.CreatedBy = "tool", createdBy
	s.jobs[j.Name] = j
	s.createdBy[j.Name] = createdBy
	return j, nil
}

func (s *fakeCronStore) ListJobs(context.Context) ([]tools.CronJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []tools.CronJob
	for _, j := range s.jobs {
		out = append(out, j)
	}
	return out, nil
}

func (s *fakeCronStore) DeleteJob(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[name]; !ok {
		return errors.New("no such job")
	}
	delete(s.jobs, name)
	return nil
}

func (s *fakeCronStore) job(name string) (tools.CronJob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[name]
	return j, ok
}

// validatingCronStore adds a validator that refuses schedules starting
// with "TZ=0", like the real store's time zone check, and lowercases names.
type validatingCronStore struct{ *fakeCronStore }

func (validatingCronStore) ValidateJob(_ context.Context, j tools.CronJob) (tools.CronJob, error) {
	if strings.HasPrefix(j.Schedule, "TZ=0") {
		return tools.CronJob{}, errors.New(`schedule "TZ=0": unknown time zone "0"`)
	}
	j.Name = strings.ToLower(j.Name)
	return j, nil
}

var cronQuiet = slog.New(slog.DiscardHandler)

// cronCall is the conversation the cron tool runs in.
var cronCall = tools.Call{
	Channel: "telegram", ChatID: "42", ThreadID: "7", PeerKind: "group", UserID: "telegram:1001",
	Session: "telegram:42:7", Agent: "ops", ToolCallID: "call-9",
}

func cronCtx() context.Context { return tools.WithCall(context.Background(), cronCall) }

func cronArgs(t *testing.T, m map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dailyArgs(t *testing.T) json.RawMessage {
	return cronArgs(t, map[string]any{"action": "create", "name": "daily", "schedule": "0 9 * * *",
		"timezone": "Europe/Berlin", "prompt": "Summarise\nyesterday's alerts"})
}

func TestCronToolMetadata(t *testing.T) {
	c := tools.NewCron(tools.CronOptions{Store: newFakeCronStore()})
	if c.Name() != "cron" || c.SideEffect() != tools.SideEffectMutating {
		t.Errorf("name %q side effect %v", c.Name(), c.SideEffect())
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Parameters(), &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	props, _ := schema["properties"].(map[string]any)
	for _, p := range []string{"action", "name", "schedule", "timezone", "prompt", "target"} {
		if _, ok := props[p]; !ok {
			t.Errorf("schema lacks %q", p)
		}
	}
}

func TestCronCreateAsksThenStores(t *testing.T) {
	store, ap := newFakeCronStore(), &cronApprover{decision: tools.AllowedOnce}
	c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Logger: cronQuiet})
	res := c.Execute(cronCtx(), dailyArgs(t))
	if res.IsError {
		t.Fatalf("create failed: %s", res.ForLLM)
	}
	_, reqs := ap.calls()
	if len(reqs) != 1 {
		t.Fatalf("want one approval request, got %d", len(reqs))
	}
	req := reqs[0]
	want := `create job "daily" at "0 9 * * *" (Europe/Berlin) posting to telegram:42:7: Summarise yesterday's alerts`
	if req.Tool != "cron" || req.Command != want || req.Pattern != want || req.Call != cronCall {
		t.Errorf("request = %+v, want command and pattern %q in the caller's call", req, want)
	}
	j, ok := store.job("daily")
	if !ok {
		t.Fatal("job not stored after approval")
	}
	if j.Target != "telegram:42:7" || j.Agent != "ops" || !j.Enabled || j.Prompt != "Summarise\nyesterday's alerts" ||
		store.createdBy["daily"] != "telegram:1001" {
		t.Errorf("stored %+v by %q", j, store.createdBy["daily"])
	}
	if !strings.Contains(res.ForLLM, "daily") {
		t.Errorf("result does not name the job: %q", res.ForLLM)
	}
}

func TestCronCreateExplicitTarget(t *testing.T) {
	store := newFakeCronStore()
	c := tools.NewCron(tools.CronOptions{Store: store, Mode: tools.CronModeAllow, Logger: cronQuiet})
	res := c.Execute(context.Background(), cronArgs(t, map[string]any{"action": "create", "name": "x",
		"schedule": "@hourly", "prompt": "p", "target": "slack:C1"}))
	if res.IsError {
		t.Fatalf("create failed: %s", res.ForLLM)
	}
	if j, _ := store.job("x"); j.Target != "slack:C1" || store.createdBy["x"] != "agent:" {
		t.Errorf("stored %+v by %q", j, store.createdBy["x"])
	}
	// Without a current chat the target is required.
	res = c.Execute(context.Background(), cronArgs(t, map[string]any{"action": "create", "name": "y",
		"schedule": "@hourly", "prompt": "p"}))
	if !res.IsError || !strings.Contains(res.ForLLM, "target") {
		t.Errorf("no chat, no target: %+v", res)
	}
}

func TestCronCreateNotStoredUnlessAllowed(t *testing.T) {
	for name, ap := range map[string]*cronApprover{
		"denied":  {decision: tools.Denied},
		"expired": {decision: tools.Expired},
		"failed":  {decision: tools.AllowedOnce, approveErr: errors.New("redis down")},
	} {
		t.Run(name, func(t *testing.T) {
			store := newFakeCronStore()
			c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Logger: cronQuiet})
			res := c.Execute(cronCtx(), dailyArgs(t))
			if !res.IsError {
				t.Errorf("want an error result, got %q", res.ForLLM)
			}
			if _, ok := store.job("daily"); ok {
				t.Error("job stored without approval")
			}
			if _, reqs := ap.calls(); len(reqs) != 1 {
				t.Errorf("want one approval request, got %d", len(reqs))
			}
		})
	}
}

func TestCronDecisionMessages(t *testing.T) {
	for dec, want := range map[tools.Decision]string{tools.Denied: "denied", tools.Expired: "in time"} {
		c := tools.NewCron(tools.CronOptions{Store: newFakeCronStore(), Approver: &cronApprover{decision: dec}, Logger: cronQuiet})
		if res := c.Execute(cronCtx(), dailyArgs(t)); !strings.Contains(res.ForLLM, want) {
			t.Errorf("%v: %q, want it to contain %q", dec, res.ForLLM, want)
		}
	}
}

func TestCronAlwaysAllowedSkipsAsking(t *testing.T) {
	desc := `create job "daily" at "0 9 * * *" (Europe/Berlin) posting to telegram:42:7: Summarise yesterday's alerts`
	store, ap := newFakeCronStore(), &cronApprover{decision: tools.Denied, always: map[string]bool{desc: true}}
	c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Logger: cronQuiet})
	if res := c.Execute(cronCtx(), dailyArgs(t)); res.IsError {
		t.Fatalf("always-allowed create failed: %s", res.ForLLM)
	}
	asked, reqs := ap.calls()
	if asked != 1 || len(reqs) != 0 {
		t.Errorf("AlwaysAllowed %d times, Approve %d times; want 1 and 0", asked, len(reqs))
	}
	if ap.asked[0] != "cron\x00"+desc {
		t.Errorf("looked up %q", ap.asked[0])
	}
	if _, ok := store.job("daily"); !ok {
		t.Error("job not stored")
	}
}

func TestCronModes(t *testing.T) {
	// Allow mode never asks.
	store, ap := newFakeCronStore(), &cronApprover{decision: tools.Denied}
	c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Mode: tools.CronModeAllow, Logger: cronQuiet})
	if res := c.Execute(cronCtx(), dailyArgs(t)); res.IsError {
		t.Fatalf("allow mode: %s", res.ForLLM)
	}
	if asked, reqs := ap.calls(); asked+len(reqs) != 0 {
		t.Error("allow mode asked the approver")
	}
	// Ask mode (the default) without approvers refuses.
	store = newFakeCronStore()
	c = tools.NewCron(tools.CronOptions{Store: store, Logger: cronQuiet})
	if res := c.Execute(cronCtx(), dailyArgs(t)); !res.IsError || !strings.Contains(res.ForLLM, "approv") {
		t.Errorf("no approver: %+v", res)
	}
	// An unknown mode fails closed.
	c = tools.NewCron(tools.CronOptions{Store: store, Mode: "yolo", Logger: cronQuiet})
	if res := c.Execute(cronCtx(), dailyArgs(t)); !res.IsError || !strings.Contains(res.ForLLM, "misconfigured") {
		t.Errorf("bad mode: %+v", res)
	}
	if _, ok := store.job("daily"); ok {
		t.Error("job stored without approval")
	}
}

func TestCronListNeverAsks(t *testing.T) {
	next := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	store := newFakeCronStore(
		tools.CronJob{Name: "here", Schedule: "@daily", Prompt: "ours", Target: "telegram:42", Enabled: true, Next: next, Source: "tool"},
		tools.CronJob{Name: "thread", Schedule: "@daily", Prompt: "ours too", Target: "telegram:42:9", Enabled: false, Source: "chat"},
		tools.CronJob{Name: "elsewhere", Schedule: "@daily", Prompt: "secret", Target: "telegram:420", Enabled: true},
	)
	ap := &cronApprover{decision: tools.Denied}
	c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Logger: cronQuiet})
	res := c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "list"}))
	if res.IsError {
		t.Fatalf("list: %s", res.ForLLM)
	}
	for _, want := range []string{"here", "2030-01-02 09:00:00", "thread", "paused", "ours"} {
		if !strings.Contains(res.ForLLM, want) {
			t.Errorf("list lacks %q:\n%s", want, res.ForLLM)
		}
	}
	if strings.Contains(res.ForLLM, "elsewhere") || strings.Contains(res.ForLLM, "secret") {
		t.Errorf("list shows another chat's job:\n%s", res.ForLLM)
	}
	if asked, reqs := ap.calls(); asked+len(reqs) != 0 {
		t.Error("list asked the approver")
	}
}

func TestCronDelete(t *testing.T) {
	job := tools.CronJob{Name: "daily", Schedule: "@daily", Prompt: "p", Target: "telegram:42", Enabled: true}
	store, ap := newFakeCronStore(job), &cronApprover{decision: tools.Denied}
	c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Logger: cronQuiet})
	if res := c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "delete", "name": "daily"})); !res.IsError {
		t.Errorf("denied delete succeeded: %q", res.ForLLM)
	}
	if _, ok := store.job("daily"); !ok {
		t.Fatal("denied delete removed the job")
	}
	_, reqs := ap.calls()
	if len(reqs) != 1 || reqs[0].Command != `delete job "daily"` || reqs[0].Pattern != reqs[0].Command {
		t.Errorf("requests = %+v", reqs)
	}
	ap.decision = tools.AllowedOnce
	if res := c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "delete", "name": " Daily "})); res.IsError {
		t.Fatalf("allowed delete: %s", res.ForLLM)
	}
	if _, ok := store.job("daily"); ok {
		t.Error("allowed delete left the job")
	}
	// A missing job is reported without bothering the approvers.
	res := c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "delete", "name": "daily"}))
	if !res.IsError || !strings.Contains(res.ForLLM, "no job named") {
		t.Errorf("missing job: %+v", res)
	}
	if _, reqs := ap.calls(); len(reqs) != 2 {
		t.Errorf("want 2 approval requests in all, got %d", len(reqs))
	}
}

func TestCronBadArguments(t *testing.T) {
	long := strings.Repeat("x", 300)
	for name, raw := range map[string]string{
		"not json":         `{"action":`,
		"not an object":    `[1,2]`,
		"wrong type":       `{"action":"create","name":5}`,
		"no action":        `{}`,
		"unknown action":   `{"action":"explode"}`,
		"no name":          `{"action":"create","schedule":"@daily","prompt":"p"}`,
		"no schedule":      `{"action":"create","name":"a","prompt":"p"}`,
		"blank prompt":     `{"action":"create","name":"a","schedule":"@daily","prompt":"  \n"}`,
		"long schedule":    `{"action":"create","name":"a","schedule":"` + long + `","prompt":"p"}`,
		"long target":      `{"action":"create","name":"a","schedule":"@daily","prompt":"p","target":"` + long + `"}`,
		"long prompt":      `{"action":"create","name":"a","schedule":"@daily","prompt":"` + strings.Repeat("é", tools.MaxCronPrompt+1) + `"}`,
		"delete no name":   `{"action":"delete"}`,
		"null":             `null`,
		"invalid by store": `{"action":"create","name":"a","schedule":"TZ=0","prompt":"p"}`,
	} {
		t.Run(name, func(t *testing.T) {
			store, ap := newFakeCronStore(), &cronApprover{decision: tools.AllowedOnce}
			c := tools.NewCron(tools.CronOptions{Store: validatingCronStore{store}, Approver: ap, Logger: cronQuiet})
			res := c.Execute(cronCtx(), json.RawMessage(raw))
			if !res.IsError || res.ForLLM == "" {
				t.Errorf("want an error result, got %+v", res)
			}
			if asked, reqs := ap.calls(); asked+len(reqs) != 0 {
				t.Error("bad arguments reached the approver")
			}
			if jobs, _ := store.ListJobs(context.Background()); len(jobs) != 0 {
				t.Errorf("stored %+v", jobs)
			}
		})
	}
}

func TestCronShowsStoreErrors(t *testing.T) {
	store := newFakeCronStore()
	c := tools.NewCron(tools.CronOptions{Store: validatingCronStore{store}, Mode: tools.CronModeAllow, Logger: cronQuiet})
	res := c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "create", "name": "a", "schedule": "TZ=0 * * * * *", "prompt": "p"}))
	if !res.IsError || !strings.Contains(res.ForLLM, `unknown time zone "0"`) {
		t.Errorf("validator error: %+v", res)
	}
	store.createErr = errors.New("a job named a exists already, defined in the config file; pick another name")
	res = c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "create", "name": "a", "schedule": "@daily", "prompt": "p"}))
	if !res.IsError || !strings.Contains(res.ForLLM, "pick another name") {
		t.Errorf("create error: %+v", res)
	}
}

func TestCronApprovalTextIsOneBoundedLine(t *testing.T) {
	store, ap := newFakeCronStore(), &cronApprover{decision: tools.AllowedOnce}
	c := tools.NewCron(tools.CronOptions{Store: store, Approver: ap, Logger: cronQuiet})
	prompt := "line one\r\nline\ttwo \u202e\x1b[31m" + strings.Repeat("ü", 500)
	res := c.Execute(cronCtx(), cronArgs(t, map[string]any{"action": "create", "name": "long", "schedule": "@daily", "prompt": prompt}))
	if res.IsError {
		t.Fatalf("create: %s", res.ForLLM)
	}
	_, reqs := ap.calls()
	if len(reqs) != 1 {
		t.Fatalf("want one request, got %d", len(reqs))
	}
	cmd := reqs[0].Command
	if strings.ContainsAny(cmd, "\r\n\t\x1b\u202e") {
		t.Errorf("description has control characters: %q", cmd)
	}
	_, shown, _ := strings.Cut(cmd, "telegram:42:7: ")
	if !strings.HasPrefix(shown, "line one line two [31m") || !strings.HasSuffix(shown, "…") {
		t.Errorf("prompt shown as %q", shown)
	}
	if n := utf8.RuneCountInString(strings.TrimSuffix(shown, "…")); n != 200 {
		t.Errorf("prompt shown with %d runes, want 200", n)
	}
	if j, _ := store.job("long"); j.Prompt != prompt {
		t.Error("stored prompt differs from the one given")
	}
}
