package agentcore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// scripted is a model that answers each call with the next response and,
// while "thinking" on call n, runs during[n] (people writing meanwhile).
type scripted struct {
	mu      sync.Mutex
	calls   [][]agentcore.Message
	replies []agentcore.Response
	during  map[int]func()
}

func (*scripted) Name() string { return "scripted" }

func (s *scripted) Chat(_ context.Context, req agentcore.Request, _ func(string)) (agentcore.Response, error) {
	s.mu.Lock()
	n := len(s.calls)
	s.calls = append(s.calls, req.Messages)
	during := s.during[n]
	s.mu.Unlock()
	if during != nil {
		during()
	}
	if n < len(s.replies) {
		return s.replies[n], nil
	}
	// Echo what the model was shown last, so replies say which message they answer.
	last := req.Messages[len(req.Messages)-1]
	return agentcore.Response{Content: "re: " + last.Content}, nil
}

// seen renders the user messages of call n, in the order the model saw them.
func (s *scripted) seen(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, m := range s.calls[n] {
		if m.Role == agentcore.RoleUser {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, ",")
}

func userMsg(text string) agentcore.Message {
	return agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: "ext-" + text}
}

// arrive stores user messages as the router does while a run goes on.
func arrive(t *testing.T, db *postgres.DB, session string, texts ...string) func() {
	return func() {
		for _, text := range texts {
			if _, err := db.Append(context.Background(), session, userMsg(text)); err != nil {
				t.Error(err)
			}
		}
	}
}

func runQueue(t *testing.T, mode agentcore.QueueMode, model *scripted) (*postgres.DB, []agentcore.Reply) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/test:burst"
	if _, err := db.Append(ctx, session, userMsg("first")); err != nil {
		t.Fatal(err)
	}
	model.during = map[int]func(){0: arrive(t, db, session, "second", "third")}
	a := &agentcore.Agent{Name: "a", Model: "m", History: db, Tools: tools.NewRegistry(tools.RegistryOptions{}),
		Provider: model, Queue: mode}
	var replies []agentcore.Reply
	res, err := a.Run(ctx, agentcore.RunInput{Session: session,
		OnReply: func(_ context.Context, r agentcore.Reply) { replies = append(replies, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replies != len(replies) || res.Idle {
		t.Fatalf("result = %+v, %d replies delivered", res, len(replies))
	}
	// The stored order is the order the model saw, and nothing is left
	// unanswered: a second run has nothing to do.
	again, err := a.Run(ctx, agentcore.RunInput{Session: session})
	if err != nil || !again.Idle {
		t.Fatalf("second run = %+v, %v; want idle", again, err)
	}
	return db, replies
}

func storedOrder(t *testing.T, db *postgres.DB) string {
	t.Helper()
	msgs, err := db.Load(context.Background(), "a/test:burst", 0)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
		parts = append(parts, fmt.Sprintf("%s:%s", m.Role, m.Content))
	}
	return strings.Join(parts, " | ")
}

// "first" is being answered when "second" and "third" arrive.
func TestQueueModesAnswerEveryMessage(t *testing.T) {
	for _, tc := range []struct {
		mode    agentcore.QueueMode
		seen    []string // user messages of each model call
		replies []string
		stored  string
	}{
		{agentcore.QueueSteer, []string{"first", "first,second,third"}, []string{"re: first", "re: third"},
			"user:first | assistant:re: first | user:second | user:third | assistant:re: third"},
		{agentcore.QueueFollowup, []string{"first", "first,second", "first,second,third"}, []string{"re: first", "re: second", "re: third"},
			"user:first | assistant:re: first | user:second | assistant:re: second | user:third | assistant:re: third"},
		{agentcore.QueueCollect, []string{"first", "first,second,third"}, []string{"re: first", "re: third"},
			"user:first | assistant:re: first | user:second | user:third | assistant:re: third"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			model := &scripted{}
			db, replies := runQueue(t, tc.mode, model)
			var seen, texts []string
			for i := range model.calls {
				seen = append(seen, model.seen(i))
			}
			for _, r := range replies {
				texts = append(texts, r.Text)
			}
			if strings.Join(seen, " / ") != strings.Join(tc.seen, " / ") {
				t.Errorf("the model saw %q, want %q", seen, tc.seen)
			}
			if strings.Join(texts, " / ") != strings.Join(tc.replies, " / ") {
				t.Errorf("replies %q, want %q", texts, tc.replies)
			}
			if got := storedOrder(t, db); got != tc.stored {
				t.Errorf("stored order\n got %s\nwant %s", got, tc.stored)
			}
		})
	}
}

// Mid-turn, steer shows a new message at the model's next call; followup
// and collect keep it until the turn's final reply.
func TestQueueMessageDuringToolStep(t *testing.T) {
	for _, tc := range []struct {
		mode   agentcore.QueueMode
		second string // user messages the model sees after the tool result
	}{
		{agentcore.QueueSteer, "first,second"},
		{agentcore.QueueFollowup, "first"},
		{agentcore.QueueCollect, "first"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ctx := context.Background()
			db := pgtest.Open(t, ctx)
			const session = "a/test:burst"
			if _, err := db.Append(ctx, session, userMsg("first")); err != nil {
				t.Fatal(err)
			}
			model := &scripted{replies: []agentcore.Response{{ToolCalls: []agentcore.ToolCall{{ID: "call_0", Name: "datetime"}}}}}
			model.during = map[int]func(){0: arrive(t, db, session, "second")}
			reg := tools.NewRegistry(tools.RegistryOptions{})
			if err := reg.Register(tools.Datetime{}); err != nil {
				t.Fatal(err)
			}
			a := &agentcore.Agent{Name: "a", Model: "m", History: db, Tools: reg, Provider: model, Queue: tc.mode}
			if _, err := a.Run(ctx, agentcore.RunInput{Session: session}); err != nil {
				t.Fatal(err)
			}
			if got := model.seen(1); got != tc.second {
				t.Fatalf("after the tool step the model saw %q, want %q", got, tc.second)
			}
			if n := len(model.calls); n != 3 && tc.mode != agentcore.QueueSteer || n != 2 && tc.mode == agentcore.QueueSteer {
				t.Fatalf("%d model calls", n)
			}
			again, err := a.Run(ctx, agentcore.RunInput{Session: session})
			if err != nil || !again.Idle {
				t.Fatalf("second run = %+v, %v; want idle (every message answered)", again, err)
			}
		})
	}
}

// A model server that numbers its calls call_0, call_1… in every reply
// must not make two calls share an id in the session.
func TestToolCallIDsAreAssignedByTheServer(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/test:ids"
	call := agentcore.Response{ToolCalls: []agentcore.ToolCall{{ID: "call_0", Name: "datetime"}}}
	model := &scripted{replies: []agentcore.Response{call, call, {Content: "done"}}}
	reg := tools.NewRegistry(tools.RegistryOptions{})
	if err := reg.Register(tools.Datetime{}); err != nil {
		t.Fatal(err)
	}
	a := &agentcore.Agent{Name: "a", Model: "m", History: db, Tools: reg, Provider: model}
	if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "twice"}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Load(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			ids[c.ID]++
			if c.ID == "call_0" {
				t.Errorf("the model's id was stored: %+v", c)
			}
		}
	}
	if len(ids) != 2 {
		t.Fatalf("tool call ids = %v, want two distinct", ids)
	}
}

// Bursts of 2–5 messages: whatever the mode, every message reaches the
// model, the last reply answers the last message, and a second run finds
// nothing left to answer.
func TestQueueBurstsOfTwoToFive(t *testing.T) {
	for _, mode := range []agentcore.QueueMode{agentcore.QueueSteer, agentcore.QueueFollowup, agentcore.QueueCollect} {
		for n := 2; n <= 5; n++ {
			t.Run(fmt.Sprintf("%s/%d", mode, n), func(t *testing.T) {
				ctx := context.Background()
				db := pgtest.Open(t, ctx)
				const session = "a/test:burst"
				if _, err := db.Append(ctx, session, userMsg("m1")); err != nil {
					t.Fatal(err)
				}
				model := &scripted{during: map[int]func(){}}
				// One more message arrives during each of the first model calls.
				for i := 2; i <= n; i++ {
					model.during[i-2] = arrive(t, db, session, fmt.Sprint("m", i))
				}
				a := &agentcore.Agent{Name: "a", Model: "m", History: db, Tools: tools.NewRegistry(tools.RegistryOptions{}),
					Provider: model, Queue: mode}
				var replies []agentcore.Reply
				if _, err := a.Run(ctx, agentcore.RunInput{Session: session,
					OnReply: func(_ context.Context, r agentcore.Reply) { replies = append(replies, r) }}); err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for i := range model.calls {
					for _, text := range strings.Split(model.seen(i), ",") {
						seen[text] = true
					}
				}
				for i := 1; i <= n; i++ {
					if !seen[fmt.Sprint("m", i)] {
						t.Errorf("m%d never reached the model", i)
					}
				}
				if last := replies[len(replies)-1]; last.Text != fmt.Sprint("re: m", n) {
					t.Errorf("last reply %q does not answer the last message", last.Text)
				}
				answered := map[string]int{}
				for _, r := range replies {
					answered[r.Text]++
					if answered[r.Text] > 1 {
						t.Errorf("%q answered twice", r.Text)
					}
				}
				if again, err := a.Run(ctx, agentcore.RunInput{Session: session}); err != nil || !again.Idle {
					t.Fatalf("second run = %+v, %v; want idle", again, err)
				}
			})
		}
	}
}
