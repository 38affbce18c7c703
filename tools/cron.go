package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The cron approval modes.
const (
	CronModeAsk   = "ask"   // creating or deleting a job needs an approver's yes (default)
	CronModeAllow = "allow" // jobs are created and deleted without asking
)

// Cron argument limits: anything longer is refused before it reaches the
// approvers or the store.
const (
	MaxCronPrompt      = 4000 // runes
	maxCronField       = 200  // bytes, for name, schedule, timezone and target
	cronDescribePrompt = 200  // runes of the prompt shown to approvers
)

// CronJob is a scheduled job as the cron tool sees it.
type CronJob struct {
	Name     string
	Schedule string // cron spec, descriptor or "at <time>"
	Timezone string // IANA name; "" is UTC
	Prompt   string
	Target   string // platform:chat_id[:thread_id]
	// Agent runs the job; "" is the default agent. CreateJob gets the
	// calling agent.
	Agent string
	// Source says where the job was defined ("config", "chat", "tool");
	// filled in by ListJobs.
	Source string
	// CreatedBy is who created the job; filled in by ListJobs.
	CreatedBy string
	Enabled   bool
	Next      time.Time // the next run; zero when paused or spent
}

// CronStore keeps the jobs the cron tool manages.
type CronStore interface {
	// CreateJob creates or replaces the job named j.Name and returns it as
	// stored. An error's text is shown to the model, so it says what to fix.
	CreateJob(ctx context.Context, j CronJob, createdBy string) (CronJob, error)
	// ListJobs lists all jobs by name.
	ListJobs(ctx context.Context) ([]CronJob, error)
	// DeleteJob deletes the job named name.
	DeleteJob(ctx context.Context, name string) error
}

// CronValidator is implemented by a CronStore that can check a job without
// saving it. The cron tool then checks before asking the approvers, so they
// never approve a job that cannot be created, and they see its normalized
// form.
type CronValidator interface {
	// ValidateJob returns j normalized, or an error saying what to fix.
	ValidateJob(ctx context.Context, j CronJob) (CronJob, error)
}

// CronOptions configures the cron tool. Store is required.
type CronOptions struct {
	Store CronStore
	// Approver decides creations and deletions in ask mode.
	Approver Approver
	// Mode is CronModeAsk (default) or CronModeAllow.
	Mode string
	// Logger receives decisions and store failures. Nil discards them.
	Logger *slog.Logger
}

// Cron is the "cron" tool: the agent creates, lists and deletes scheduled
// jobs whose replies are posted to a chat. Creating and deleting go through
// the approvers in ask mode; listing never does.
type Cron struct {
	opts CronOptions
}

// NewCron returns the cron tool with defaults filled in.
func NewCron(o CronOptions) *Cron {
	if o.Mode == "" {
		o.Mode = CronModeAsk
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Cron{opts: o}
}

// Name implements Tool.
func (*Cron) Name() string { return "cron" }

// Description implements Tool.
func (*Cron) Description() string {
	return "Manage scheduled jobs: at each time of the schedule an agent runs the prompt and posts its reply to a chat " +
		"(the reply NO_REPLY posts nothing). action=create (needs name, schedule, prompt; target defaults to this chat) " +
		"may wait for a human's approval and replaces an earlier job of the same name created by this tool; " +
		"action=list shows the jobs posting to this chat with their next run; action=delete removes a job created by this tool."
}

// Parameters implements Tool.
func (*Cron) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["create","list","delete"]},` +
		`"name":{"type":"string","description":"Job name: 1-63 lowercase letters, digits, '-' or '_' (create, delete)."},` +
		`"schedule":{"type":"string","description":"5 cron fields like \"0 9 * * 1-5\", a descriptor like \"@daily\" or \"@every 2h\", or one-shot \"at 2026-01-02 15:04\" (create)."},` +
		`"timezone":{"type":"string","description":"IANA time zone like \"Europe/Berlin\" (default UTC)."},` +
		`"prompt":{"type":"string","description":"What the agent should do at each run (create)."},` +
		`"target":{"type":"string","description":"Chat to post to as platform:chat_id[:thread_id] (default: this chat)."}},` +
		`"required":["action"],"additionalProperties":false}`)
}

// SideEffect implements Tool: cron writes job records.
func (*Cron) SideEffect() SideEffect { return SideEffectMutating }

// ApprovesItself implements SelfApproving: cron asks per job it creates or
// deletes (cron.approval), never for listing.
func (*Cron) ApprovesItself() {}

// cronArgs are the tool's arguments.
type cronArgs struct {
	Action   string `json:"action"`
	Name     string `json:"name"`
	Schedule string `json:"schedule"`
	Timezone string `json:"timezone"`
	Prompt   string `json:"prompt"`
	Target   string `json:"target"`
}

// Execute implements Tool.
func (c *Cron) Execute(ctx context.Context, raw json.RawMessage) Result {
	var a cronArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return ErrorResult(`invalid arguments: pass {"action": "create"|"list"|"delete", "name"?, "schedule"?, "timezone"?, "prompt"?, "target"?} as strings`)
	}
	if c.opts.Store == nil {
		return ErrorResult("scheduled jobs are not enabled on this bot; ask an admin to set up the database")
	}
	switch c.opts.Mode {
	case CronModeAsk, CronModeAllow:
	default:
		return ErrorResult("the cron tool is misconfigured: its approval mode must be ask or allow; ask an admin to fix it")
	}
	call, _ := CallFrom(ctx)
	log := c.opts.Logger.With("tool", "cron", "session", call.Session)
	switch strings.ToLower(strings.TrimSpace(a.Action)) {
	case "create":
		return c.create(ctx, log, call, a)
	case "list":
		return c.list(ctx, log, call)
	case "delete":
		return c.delete(ctx, log, call, a)
	}
	return ErrorResult(`missing or unknown "action": use "create", "list" or "delete"`)
}

func (c *Cron) create(ctx context.Context, log *slog.Logger, call Call, a cronArgs) Result {
	for field, v := range map[string]string{"name": a.Name, "schedule": a.Schedule, "timezone": a.Timezone, "target": a.Target} {
		if len(v) > maxCronField {
			return ErrorResult(fmt.Sprintf("%q is too long (at most %d bytes)", field, maxCronField))
		}
	}
	switch {
	case strings.TrimSpace(a.Name) == "":
		return ErrorResult(`missing "name": give the job a short name like "daily-report"`)
	case strings.TrimSpace(a.Schedule) == "":
		return ErrorResult(`missing "schedule": use 5 cron fields like "0 9 * * 1-5", "@daily", or "at 2026-01-02 15:04"`)
	case strings.TrimSpace(a.Prompt) == "":
		return ErrorResult(`missing "prompt": say what the agent should do at each run`)
	case utf8.RuneCountInString(a.Prompt) > MaxCronPrompt:
		return ErrorResult(fmt.Sprintf(`"prompt" is too long (at most %d characters); shorten it`, MaxCronPrompt))
	}
	target := strings.TrimSpace(a.Target)
	if target == "" {
		if call.Channel == "" || call.ChatID == "" {
			return ErrorResult(`missing "target": there is no current chat; pass it as platform:chat_id[:thread_id]`)
		}
		target = call.Channel + ":" + call.ChatID
		if call.ThreadID != "" {
			target += ":" + call.ThreadID
		}
	}
	job := CronJob{Name: strings.TrimSpace(a.Name), Schedule: strings.TrimSpace(a.Schedule), Timezone: strings.TrimSpace(a.Timezone),
		Prompt: strings.TrimSpace(a.Prompt), Target: target, Agent: call.Agent, Enabled: true}
	if v, ok := c.opts.Store.(CronValidator); ok {
		checked, err := v.ValidateJob(ctx, job)
		if err != nil {
			return ErrorResult("not created: " + err.Error())
		}
		job = checked
	}
	desc := fmt.Sprintf("create job %q at %q (%s) posting to %s: %s", job.Name, job.Schedule, zoneName(job.Timezone),
		oneLine(job.Target, maxCronField), oneLine(job.Prompt, cronDescribePrompt))
	if res, ok := c.approve(ctx, log, call, desc); !ok {
		return res
	}
	createdBy := call.UserID
	if createdBy == "" {
		createdBy = "agent:" + call.Agent
	}
	stored, err := c.opts.Store.CreateJob(ctx, job, createdBy)
	if err != nil {
		log.Warn("cron create", "job", job.Name, "error", err)
		return ErrorResult("not created: " + err.Error())
	}
	log.Info("cron created", "job", stored.Name)
	return Result{ForLLM: fmt.Sprintf("Created job %q (%s, %s) posting to %s; %s.", stored.Name, stored.Schedule,
		zoneName(stored.Timezone), stored.Target, nextRun(stored))}
}

func (c *Cron) list(ctx context.Context, log *slog.Logger, call Call) Result {
	jobs, err := c.opts.Store.ListJobs(ctx)
	if err != nil {
		log.Error("cron list", "error", err)
		return ErrorResult("could not list jobs right now (storage unavailable); try again in a minute")
	}
	var b strings.Builder
	here := call.Channel + ":" + call.ChatID
	for _, j := range jobs {
		// Only this chat's jobs: their prompts may be private to other chats.
		if call.ChatID != "" && j.Target != here && !strings.HasPrefix(j.Target, here+":") {
			continue
		}
		fmt.Fprintf(&b, "- %s: %q (%s) → %s, %s, defined by %s: %s\n", j.Name, j.Schedule, zoneName(j.Timezone),
			j.Target, nextRun(j), orUnknown(j.Source), oneLine(j.Prompt, cronDescribePrompt))
	}
	if b.Len() == 0 {
		return Result{ForLLM: "No scheduled jobs post to this chat."}
	}
	return Result{ForLLM: b.String()}
}

func (c *Cron) delete(ctx context.Context, log *slog.Logger, call Call, a cronArgs) Result {
	name := strings.ToLower(strings.TrimSpace(a.Name))
	if name == "" {
		return ErrorResult(`missing "name": pass the name of the job to delete (action "list" shows them)`)
	}
	if len(name) > maxCronField {
		return ErrorResult(fmt.Sprintf(`"name" is too long (at most %d bytes)`, maxCronField))
	}
	jobs, err := c.opts.Store.ListJobs(ctx)
	if err != nil {
		log.Error("cron list", "error", err)
		return ErrorResult("could not look up jobs right now (storage unavailable); try again in a minute")
	}
	if !slices.ContainsFunc(jobs, func(j CronJob) bool { return j.Name == name }) {
		return ErrorResult(fmt.Sprintf(`no job named %q; action "list" shows this chat's jobs`, name))
	}
	if res, ok := c.approve(ctx, log, call, fmt.Sprintf("delete job %q", name)); !ok {
		return res
	}
	if err := c.opts.Store.DeleteJob(ctx, name); err != nil {
		log.Warn("cron delete", "job", name, "error", err)
		return ErrorResult("not deleted: " + err.Error())
	}
	log.Info("cron deleted", "job", name)
	return Result{ForLLM: fmt.Sprintf("Deleted job %q.", name)}
}

// approve asks the approvers in ask mode unless desc was always-allowed. ok
// is false when the change must not happen (now); res then says why or parks.
func (c *Cron) approve(ctx context.Context, log *slog.Logger, call Call, desc string) (res Result, ok bool) {
	if c.opts.Mode == CronModeAllow {
		return Result{}, true
	}
	return AskApproval(ctx, log, c.opts.Approver, ApprovalRequest{Tool: "cron", Command: desc, Pattern: desc, Call: call,
		Class: c.SideEffect().String(), Groups: groupsOf(c)}, "change")
}

// oneLine makes s safe to show on one line: whitespace runs become one
// space, other unprintable runes (controls, bidi overrides) are dropped, and
// it is cut to max runes with "…".
func oneLine(s string, max int) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case !unicode.IsPrint(r):
			continue
		}
		sep := space && b.Len() > 0
		space = false
		if sep {
			n++
		}
		if n >= max {
			b.WriteString("…")
			return b.String()
		}
		if sep {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func zoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return oneLine(tz, maxCronField)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func nextRun(j CronJob) string {
	switch {
	case !j.Enabled:
		return "paused"
	case j.Next.IsZero():
		return "no next run"
	}
	return "next run " + j.Next.Format("2006-01-02 15:04:05 MST")
}
