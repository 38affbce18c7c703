package askuser_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/askuser"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// pipeline records what the questions ask of the chat pipeline.
type pipeline struct {
	mu      sync.Mutex
	asked   []bot.OutboxMessage
	pressed []string
	told    []string
	resumed []string // session@user
}

func (p *pipeline) AskDecision(_ context.Context, _ bot.DecisionMessages, m bot.OutboxMessage, _, _, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, m)
}

func (p *pipeline) EditDecisions(context.Context, bot.DecisionMessages, string, string, func(bot.DecisionMessage) string) {
}

func (p *pipeline) AnswerPress(_ context.Context, _ channels.Inbound, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pressed = append(p.pressed, text)
}

func (p *pipeline) Notify(_ context.Context, _ channels.Inbound, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.told = append(p.told, text)
}

func (p *pipeline) Resume(_ context.Context, session string, _ channels.Address, user string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resumed = append(p.resumed, session+"@"+user)
}

func (p *pipeline) SessionKey(_ context.Context, addr channels.Address) string {
	return "ops/" + addr.String()
}

// lastPress is the answer to the newest press.
func (p *pipeline) lastPress() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pressed) == 0 {
		return ""
	}
	return p.pressed[len(p.pressed)-1]
}

func (p *pipeline) resumes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.resumed...)
}

// setup returns a question service on a fresh database, attached to a
// recording pipeline.
func setup(t *testing.T) (*askuser.Service, *pipeline, *postgres.DB) {
	t.Helper()
	db := pgtest.Open(t, context.Background())
	s := askuser.New(askuser.Options{Store: db})
	p := &pipeline{}
	s.Attach(p)
	return s, p, db
}

// chatCall is a call in telegram chat 42 started by telegram:42.
func chatCall(id string) tools.Call {
	return tools.Call{Channel: "telegram", ChatID: "42", UserID: "telegram:42", Session: "ops/telegram:42", Agent: "ops", ToolCallID: id}
}

// run executes ask_user with args as call.
func run(s *askuser.Service, call tools.Call, args string) tools.Result {
	return s.Tool().Execute(tools.WithCall(context.Background(), call), json.RawMessage(args))
}

// from is a message or press in telegram chat 42 by user.
func from(user, text, externalID string) channels.Inbound {
	return channels.Inbound{Platform: "telegram", ChatID: "42", UserID: user, Text: text, ExternalID: externalID}
}

func TestAskUserChecksItsArguments(t *testing.T) {
	s, p, _ := setup(t)
	long := strings.Repeat("x", 65)
	many := `["1","2","3","4","5","6","7","8","9","10","11"]`
	for args, want := range map[string]string{
		`{"question": 42}`:                                  `arguments must be {"question"`,
		`{"question": "ok?", "colour": "red"}`:              `unknown field "colour"`,
		`{"question": "   "}`:                               "question is empty",
		`{"question": "` + strings.Repeat("q", 2001) + `"}`: "at most 2000",
		`{"question": "ok?", "options": ` + many + `}`:      "11 options, at most 10",
		`{"question": "ok?", "options": ["a", " "]}`:        "option 2 is empty",
		`{"question": "ok?", "options": ["` + long + `"]}`:  "at most 64",
		`{"question": "ok?", "options": ["a\nb"]}`:          "line break",
		`{"question": "ok?", "options": ["a", "a "]}`:       "given twice",
	} {
		res := run(s, chatCall("call_bad"), args)
		if !res.IsError || res.Waiting != nil || !strings.Contains(res.ForLLM, want) {
			t.Errorf("%s: result %+v, want an error containing %q", args, res, want)
		}
	}
	if len(p.asked) != 0 {
		t.Fatalf("bad arguments asked %d questions", len(p.asked))
	}
}

// Background work and runs nobody started have nobody to ask.
func TestAskUserRefusesWhereNobodyIsAsked(t *testing.T) {
	s, p, _ := setup(t)
	for name, c := range map[string]tools.Call{
		"teammate": {Channel: "telegram", ChatID: "42", UserID: "telegram:42", Session: "dev/team:eng:telegram:42", ToolCallID: "c"},
		"subagent": {Channel: "telegram", ChatID: "42", UserID: "telegram:42", Session: "ops/sub:ab12:ops/telegram:42", ToolCallID: "c"},
		"job":      {Session: "ops/job:nightly", ToolCallID: "c"},
		"nobody":   {Channel: "telegram", ChatID: "42", Session: "ops/telegram:42", ToolCallID: "c"},
		"stranger": {Channel: "telegram", ChatID: "42", UserID: "slack:U1", Session: "ops/telegram:42", ToolCallID: "c"},
	} {
		res := run(s, c, `{"question": "ok?"}`)
		if !res.IsError || !strings.Contains(res.ForLLM, "ask_user works only in a chat with a person") {
			t.Errorf("%s: result %+v, want the refusal", name, res)
		}
	}
	if len(p.asked) != 0 {
		t.Fatalf("%d questions asked with nobody to ask", len(p.asked))
	}
}

// Asked once per call; only the asker's press answers; the answer is the
// result of the call made again, also by a run resumed without its person.
func TestAskUserAnsweredByPress(t *testing.T) {
	s, p, db := setup(t)
	call := chatCall("call_1")
	res := run(s, call, `{"question": "Which colour?", "options": ["blue", "red"]}`)
	if res.Waiting == nil || !res.Waiting.New || res.Waiting.For != "telegram:42" || res.Waiting.What != "Which colour?" {
		t.Fatalf("first call = %+v, want a new wait for telegram:42", res)
	}
	if len(p.asked) != 1 || len(p.asked[0].Buttons) != 2 || p.asked[0].To.String() != "telegram:42" {
		t.Fatalf("asked %+v", p.asked)
	}
	res = run(s, call, `{"question": "Which colour?", "options": ["blue", "red"]}`)
	if res.Waiting == nil || res.Waiting.New || len(p.asked) != 1 {
		t.Fatalf("the call made again = %+v after %d posts; want the same wait, not asked again", res, len(p.asked))
	}
	q, err := db.QuestionOfCall(context.Background(), call.Session, call.ToolCallID)
	if err != nil {
		t.Fatal(err)
	}
	red := p.asked[0].Buttons[0][0].Data // "qu:<id>:a"
	_, rest, _ := strings.Cut(red, ":")
	id, _, _ := strings.Cut(rest, ":")
	if id != q.ID {
		t.Fatalf("button %q does not name question %s", red, q.ID)
	}

	s.Decide(context.Background(), from("43", "", "p1"), q.ID, "a")
	if got := p.lastPress(); got != "Only telegram:42 can answer this." {
		t.Fatalf("someone else's press answered %q", got)
	}
	s.Decide(context.Background(), from("42", "", "p2"), q.ID, "c")
	if got := p.lastPress(); got != "This button is no longer active." {
		t.Fatalf("press on an option not offered answered %q", got)
	}
	if r := run(s, call, `{"question": "Which colour?"}`); r.Waiting == nil || len(p.resumes()) != 0 {
		t.Fatalf("after refused presses: %+v, resumed %v; want still waiting", r, p.resumes())
	}
	s.Decide(context.Background(), from("42", "", "p3"), q.ID, "a")
	if got := p.lastPress(); got != "Answered: blue" {
		t.Fatalf("the asker's press answered %q", got)
	}
	if got := p.resumes(); len(got) != 1 || got[0] != "ops/telegram:42@telegram:42" {
		t.Fatalf("resumed %v, want the session once, for the asker", got)
	}
	recovered := call
	recovered.UserID = ""
	if r := run(s, recovered, `{"question": "Which colour?"}`); r.Waiting != nil || r.IsError || r.ForLLM != "telegram:42 pressed: blue" {
		t.Fatalf("the resumed call = %+v", r)
	}
	s.Decide(context.Background(), from("42", "", "p4"), q.ID, "b")
	if got := p.lastPress(); !strings.HasPrefix(got, "Already settled") || len(p.resumes()) != 1 {
		t.Fatalf("a second press answered %q, resumed %v", got, p.resumes())
	}
}

// The asker's message is the answer, once, and a redelivery of it is taken
// again without changing the answer; others' messages are messages.
func TestAskUserAnsweredByText(t *testing.T) {
	s, p, _ := setup(t)
	ctx := context.Background()
	call := chatCall("call_1")
	run(s, call, `{"question": "Which colour?"}`)
	for name, in := range map[string]channels.Inbound{
		"someone else": from("43", "green", "m1"),
		"with a file":  {Platform: "telegram", ChatID: "42", UserID: "42", Text: "green", ExternalID: "m2", Attachments: []channels.Attachment{{Name: "a.png"}}},
	} {
		if taken, err := s.TakeAnswer(ctx, call.Session, in, in.Text); err != nil || taken {
			t.Fatalf("%s: taken %v, %v", name, taken, err)
		}
	}
	if taken, err := s.TakeAnswer(ctx, call.Session, from("42", "deep blue", "m3"), "deep blue"); err != nil || !taken {
		t.Fatalf("the asker's answer: taken %v, %v", taken, err)
	}
	if taken, err := s.TakeAnswer(ctx, call.Session, from("42", "deep blue, again", "m3"), "deep blue, again"); err != nil || !taken {
		t.Fatalf("its redelivery: taken %v, %v", taken, err)
	}
	if r := run(s, call, `{"question": "Which colour?"}`); r.ForLLM != "telegram:42 answered: deep blue" {
		t.Fatalf("the call's result = %+v", r)
	}
	if taken, err := s.TakeAnswer(ctx, call.Session, from("42", "thanks", "m4"), "thanks"); err != nil || taken {
		t.Fatalf("the next message: taken %v, %v; want a message of its own", taken, err)
	}
	if got := p.resumes(); len(got) < 1 {
		t.Fatal("the answer did not resume the run")
	}
}

// A question nobody answers in time expires: the expiry loop resumes its
// run, and the call's result says nobody answered.
func TestAskUserExpires(t *testing.T) {
	s, p, db := setup(t)
	ctx := context.Background()
	past := time.Now().Add(-2 * time.Hour)
	if _, _, err := db.CreateQuestion(ctx, askuser.Question{ID: bot.NewID(), Session: "ops/telegram:42", ToolCallID: "call_1",
		Asker: "telegram:42", Chat: channels.Address{Platform: "telegram", ChatID: "42"}, Text: "Still there?",
		CreatedAt: past, ExpiresAt: past.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	n, err := s.ExpireDue(ctx)
	if err != nil || n != 1 || len(p.resumes()) != 1 {
		t.Fatalf("ExpireDue = %d, %v; resumed %v", n, err, p.resumes())
	}
	if r := run(s, chatCall("call_1"), `{"question": "Still there?"}`); !r.IsError || !strings.Contains(r.ForLLM, "nobody answered within 1 hour") {
		t.Fatalf("the call's result = %+v", r)
	}
}

// /cancel withdraws the sender's own question; an admin's, anyone's.
func TestAskUserCancel(t *testing.T) {
	s, p, _ := setup(t)
	ctx := context.Background()
	call := chatCall("call_1")
	run(s, call, `{"question": "Which colour?"}`)
	if _, handled := s.Cancel(ctx, from("43", "/cancel", "c1"), false); handled {
		t.Fatal("someone else's /cancel withdrew the question")
	}
	if text, handled := s.Cancel(ctx, from("42", "/cancel", "c2"), false); !handled || text != "" || len(p.told) != 1 || len(p.resumes()) != 1 {
		t.Fatalf("/cancel = %q handled %v; told %v, resumed %v", text, handled, p.told, p.resumes())
	}
	if r := run(s, call, `{"question": "Which colour?"}`); !r.IsError || !strings.Contains(r.ForLLM, "telegram:42 withdrew the question") {
		t.Fatalf("the call's result = %+v", r)
	}
	second := chatCall("call_2")
	run(s, second, `{"question": "Which size?"}`)
	if _, handled := s.Cancel(ctx, from("43", "/cancel", "c3"), true); !handled || len(p.resumes()) != 2 {
		t.Fatalf("an admin's /cancel: handled %v, resumed %v", handled, p.resumes())
	}
	if r := run(s, second, `{"question": "Which size?"}`); !r.IsError || !strings.Contains(r.ForLLM, "telegram:43 withdrew the question") {
		t.Fatalf("the call's result = %+v", r)
	}
}

// A press and a typed answer at the same moment: one wins, the run resumes
// once, and the typed message is taken only when it won.
func TestAskUserPressAndTextRace(t *testing.T) {
	s, p, db := setup(t)
	ctx := context.Background()
	for i := range 5 {
		call := chatCall("call_race_" + string(rune('a'+i)))
		run(s, call, `{"question": "Now?", "options": ["yes"]}`)
		q, err := db.QuestionOfCall(ctx, call.Session, call.ToolCallID)
		if err != nil {
			t.Fatal(err)
		}
		before := len(p.resumes())
		var (
			wg    sync.WaitGroup
			taken bool
		)
		wg.Add(2)
		go func() { defer wg.Done(); s.Decide(ctx, from("42", "", "p"), q.ID, "a") }()
		go func() {
			defer wg.Done()
			var err error
			if taken, err = s.TakeAnswer(ctx, call.Session, from("42", "no", "m-"+q.ID), "no"); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		if n := len(p.resumes()) - before; n != 1 {
			t.Fatalf("round %d: %d resumptions, want 1", i, n)
		}
		want := "telegram:42 pressed: yes"
		if taken {
			want = "telegram:42 answered: no"
		}
		if r := run(s, call, `{"question": "Now?", "options": ["yes"]}`); r.ForLLM != want {
			t.Fatalf("round %d: result %q, want %q (typed answer taken: %v)", i, r.ForLLM, want, taken)
		}
	}
}
