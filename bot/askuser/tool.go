package askuser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Bounds of the tool's arguments: a question fits in one chat message with
// room to spare, and the options fit as buttons on every platform.
const (
	MaxQuestion  = 2000 // characters
	MaxOptions   = 10
	MaxOptionLen = 64 // characters of one option
)

// ToolName is the name the model calls the tool by.
const ToolName = "ask_user"

// noPerson is the refusal where there is nobody to ask.
const noPerson = "ask_user works only in a chat with a person"

// Tool is ask_user: it asks the person the run works for a question in
// the chat and waits, parked, for the answer, which is its result.
type Tool struct{ s *Service }

var _ tools.Tool = Tool{}

// Tool returns the ask_user tool of s.
func (s *Service) Tool() Tool { return Tool{s: s} }

// Name implements tools.Tool.
func (Tool) Name() string { return ToolName }

// Description implements tools.Tool.
func (Tool) Description() string {
	return "Ask the person you are talking with a question in the chat and wait for their answer, " +
		"which is this tool's result. Give options (at most 10, each at most 64 characters) to show them as buttons; " +
		"they may also type any answer. Use it only when you cannot go on without their answer. " +
		"It waits up to an hour; then you are told nobody answered."
}

// Parameters implements tools.Tool.
func (Tool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"question":{"type":"string","description":"the question, as the person should read it","maxLength":2000},` +
		`"options":{"type":"array","items":{"type":"string","maxLength":64},"maxItems":10,` +
		`"description":"short answers to offer as buttons (optional)"}},` +
		`"required":["question"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool: the call waits on a person.
func (Tool) SideEffect() tools.SideEffect { return tools.SideEffectBlocking }

// args are ask_user's arguments.
type args struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

// Execute implements tools.Tool.
func (t Tool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	a, err := parseArgs(raw)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	call, _ := tools.CallFrom(ctx)
	return t.s.ask(ctx, call, a)
}

// parseArgs reads and checks the arguments, saying what to fix.
func parseArgs(raw json.RawMessage) (args, error) {
	var a args
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf(`arguments must be {"question": "...", "options": ["...", ...]} (options optional): %v`, err)
	}
	a.Question = strings.TrimSpace(a.Question)
	switch n := utf8.RuneCountInString(a.Question); {
	case n == 0:
		return a, errors.New("question is empty: say what you want to know")
	case n > MaxQuestion:
		return a, fmt.Errorf("question is %d characters, at most %d: shorten it", n, MaxQuestion)
	case len(a.Options) > MaxOptions:
		return a, fmt.Errorf("%d options, at most %d: offer fewer (the person can always type an answer)", len(a.Options), MaxOptions)
	}
	seen := map[string]bool{}
	for i, o := range a.Options {
		o = strings.TrimSpace(o)
		switch n := utf8.RuneCountInString(o); {
		case n == 0:
			return a, fmt.Errorf("option %d is empty: give every option a label", i+1)
		case n > MaxOptionLen:
			return a, fmt.Errorf("option %d is %d characters, at most %d: shorten it", i+1, n, MaxOptionLen)
		case strings.ContainsAny(o, "\r\n"):
			return a, fmt.Errorf("option %d has a line break: a button label is one line", i+1)
		case seen[o]:
			return a, fmt.Errorf("option %q is given twice: make the options distinct", o)
		}
		seen[o] = true
		a.Options[i] = o
	}
	return a, nil
}

// ask records the question of call (once per session and tool call),
// posts it the first time, and returns what the call's result is now: the
// answer, or a parked Result while there is none.
func (s *Service) ask(ctx context.Context, call tools.Call, a args) tools.Result {
	if s.chat == nil {
		return tools.ErrorResult("ask_user is not set up in this daemon; go on without asking")
	}
	if scope := tools.ScopeOf(call.Session); scope != tools.OriginOf(call.Session) || strings.HasPrefix(scope, "job:") {
		return tools.ErrorResult(noPerson + ": this is background work (a team, subagent or job session); " +
			"say what you need to know in your result instead")
	}
	if call.Session == "" || call.ToolCallID == "" {
		return tools.ErrorResult(noPerson + ": this call belongs to no conversation")
	}
	var (
		q       Question
		created bool
		err     error
	)
	if isPerson(call) {
		now := time.Now()
		q, created, err = s.o.Store.CreateQuestion(ctx, Question{
			ID: bot.NewID(), Session: call.Session, ToolCallID: call.ToolCallID, Agent: call.Agent, Asker: call.UserID,
			Chat: channels.Address{Platform: call.Channel, ChatID: call.ChatID, ThreadID: call.ThreadID},
			Text: a.Question, Options: a.Options, Status: StatusPending, CreatedAt: now, ExpiresAt: now.Add(s.o.Timeout),
		})
	} else {
		// A run resumed without its person (recovery after a crash) still
		// finds the question it asked before.
		q, err = s.o.Store.QuestionOfCall(ctx, call.Session, call.ToolCallID)
		if errors.Is(err, bot.ErrNotFound) {
			return tools.ErrorResult(noPerson + ": nobody in particular started this run; ask in your reply instead")
		}
	}
	if err != nil {
		s.o.Logger.Error("record question", "session", call.Session, "err", err)
		return tools.ErrorResult("could not ask the question right now (storage unavailable); try again in a moment")
	}
	if created {
		s.o.Logger.Info("question asked", "question_id", q.ID, "session", q.Session, "asker", q.Asker)
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: q.Chat, Text: questionText(q), Buttons: buttonsFor(q)},
			Kind, q.ID, "asker")
	}
	return s.resultOf(ctx, q, created)
}

// isPerson reports whether call's run was started by a person in its chat.
func isPerson(call tools.Call) bool {
	return call.Channel != "" && call.ChatID != "" && strings.HasPrefix(call.UserID, call.Channel+":") &&
		len(call.UserID) > len(call.Channel)+1
}

// resultOf is the call's result for q: its answer, or a parked Result
// while it is pending (created: this call asked it). A pending question
// whose time is up is expired here.
func (s *Service) resultOf(ctx context.Context, q Question, created bool) tools.Result {
	if q.Status == StatusPending && !time.Now().Before(q.ExpiresAt) {
		after, _, err := s.expire(ctx, q, false)
		if err != nil {
			s.o.Logger.Error("expire question", "question_id", q.ID, "err", err)
		}
		q = after
	}
	switch q.Status {
	case StatusPending:
		s.expiries.Note(q.ExpiresAt)
		return tools.Result{ForLLM: "waiting for " + q.Asker + " to answer",
			Waiting: &tools.Waiting{What: q.Text, Since: q.CreatedAt, New: created, For: q.Asker}}
	case StatusAnswered:
		verb := "answered"
		if q.How == ByPress {
			verb = "pressed"
		}
		return tools.Result{ForLLM: q.AnsweredBy + " " + verb + ": " + q.Answer}
	case StatusCancelled:
		return tools.ErrorResult(q.AnsweredBy + " withdrew the question (/cancel), so nobody answered; go on without the answer")
	}
	return tools.ErrorResult(fmt.Sprintf("nobody answered within %s; go on without the answer, or ask again if you still need it",
		timeoutText(s.o.Timeout)))
}
