package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/askuser"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// newQuestion returns a question of (session, call) for telegram:42,
// expiring in an hour.
func newQuestion(session, call string) askuser.Question {
	now := time.Now().Truncate(time.Microsecond)
	return askuser.Question{
		ID: bot.NewID(), Session: session, ToolCallID: call, Agent: "ops", Asker: "telegram:42",
		Chat: channels.Address{Platform: "telegram", ChatID: "42"}, Text: "Which colour?", Options: []string{"blue", "red"},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}
}

// createQuestion stores q, failing the test unless it is new.
func createQuestion(t *testing.T, db *postgres.DB, q askuser.Question) askuser.Question {
	t.Helper()
	stored, created, err := db.CreateQuestion(context.Background(), q)
	if err != nil || !created {
		t.Fatalf("CreateQuestion = created %v, %v", created, err)
	}
	return stored
}

func TestQuestionCreatedOncePerCall(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	first := createQuestion(t, db, newQuestion("ops/telegram:42", "call_1"))
	if first.Status != askuser.StatusPending || first.Asker != "telegram:42" || len(first.Options) != 2 || first.Options[1] != "red" {
		t.Fatalf("stored question = %+v", first)
	}
	again := newQuestion("ops/telegram:42", "call_1")
	again.Text = "asked again"
	got, created, err := db.CreateQuestion(ctx, again)
	if err != nil || created || got.ID != first.ID || got.Text != "Which colour?" {
		t.Fatalf("second CreateQuestion = %+v created %v, %v; want the first, not created", got, created, err)
	}
	// Concurrent asks of one call store one question.
	var wg sync.WaitGroup
	ids := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, c, err := db.CreateQuestion(ctx, newQuestion("ops/telegram:42", "call_2"))
			if err != nil {
				t.Error(err)
			}
			if c {
				ids <- q.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	if n := len(ids); n != 1 {
		t.Fatalf("%d concurrent asks created a question, want 1", n)
	}
	byCall, err := db.QuestionOfCall(ctx, "ops/telegram:42", "call_1")
	if err != nil || byCall.ID != first.ID {
		t.Fatalf("QuestionOfCall = %+v, %v", byCall, err)
	}
	if _, err := db.QuestionOfCall(ctx, "ops/telegram:42", "call_9"); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("QuestionOfCall(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := db.GetQuestion(ctx, "nope"); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("GetQuestion(unknown) = %v, want ErrNotFound", err)
	}
	bad := newQuestion("ops/telegram:42", "call_3")
	bad.Asker = ""
	if _, _, err := db.CreateQuestion(ctx, bad); err == nil {
		t.Fatal("a question for nobody was stored")
	}
}

// A press and a typed answer at the same moment, on many connections:
// exactly one answers, and every loser sees the winner's answer.
func TestQuestionAnsweredOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for round := range 3 {
		q := createQuestion(t, db, newQuestion("ops/telegram:42", fmt.Sprintf("call_%d", round)))
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins []askuser.Question
			seen []askuser.Question
		)
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := askuser.Outcome{Status: askuser.StatusAnswered, Answer: "blue", By: "telegram:42", How: askuser.ByPress}
				if i%2 == 1 {
					o = askuser.Outcome{Status: askuser.StatusAnswered, Answer: fmt.Sprintf("typed %d", i), By: "telegram:42",
						How: askuser.ByText, ExternalID: fmt.Sprintf("%d-%d", round, i)}
				}
				after, changed, err := db.DecideQuestion(ctx, q.ID, o)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, after)
				if changed {
					wins = append(wins, after)
				}
			}()
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("%d answers won, want 1", len(wins))
		}
		for _, s := range seen {
			if s.Status != askuser.StatusAnswered || s.Answer != wins[0].Answer || s.How != wins[0].How {
				t.Fatalf("a loser saw %+v, the winner %+v", s, wins[0])
			}
		}
		// Nothing changes it afterwards, not even expiry.
		if after, changed, err := db.DecideQuestion(ctx, q.ID, askuser.Outcome{Status: askuser.StatusExpired, By: "system"}); err != nil || changed || after.Status != askuser.StatusAnswered {
			t.Fatalf("expiring an answered question = %+v changed %v, %v", after, changed, err)
		}
	}
	if _, _, err := db.DecideQuestion(ctx, "nope", askuser.Outcome{Status: askuser.StatusCancelled, By: "telegram:42"}); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("deciding an unknown question = %v, want ErrNotFound", err)
	}
	q := createQuestion(t, db, newQuestion("ops/telegram:42", "call_x"))
	if _, _, err := db.DecideQuestion(ctx, q.ID, askuser.Outcome{Status: "allowed", By: "telegram:42"}); err == nil {
		t.Fatal("a made-up outcome was accepted")
	}
}

// An answer after the question's time loses to expiry; DueQuestions lists
// it, with when the next one expires.
func TestQuestionExpiry(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	late := newQuestion("ops/telegram:42", "call_late")
	late.CreatedAt, late.ExpiresAt = late.CreatedAt.Add(-2*time.Hour), late.CreatedAt.Add(-time.Hour)
	late = createQuestion(t, db, late)
	later := createQuestion(t, db, newQuestion("ops/telegram:7", "call_later"))

	after, changed, err := db.DecideQuestion(ctx, late.ID, askuser.Outcome{Status: askuser.StatusAnswered, Answer: "blue", By: "telegram:42", How: askuser.ByPress})
	if err != nil || changed || after.Status != askuser.StatusPending {
		t.Fatalf("a late answer = %+v changed %v, %v; want it lost, still pending", after, changed, err)
	}
	due, next, err := db.DueQuestions(ctx)
	if err != nil || len(due) != 1 || due[0].ID != late.ID || !next.Equal(later.ExpiresAt) {
		t.Fatalf("DueQuestions = %+v next %v, %v; want the late one, next %v", due, next, err, later.ExpiresAt)
	}
	after, changed, err = db.DecideQuestion(ctx, late.ID, askuser.Outcome{Status: askuser.StatusExpired, By: "system"})
	if err != nil || !changed || after.Status != askuser.StatusExpired || after.AnsweredBy != "system" {
		t.Fatalf("expire = %+v changed %v, %v", after, changed, err)
	}
	if due, _, err := db.DueQuestions(ctx); err != nil || len(due) != 0 {
		t.Fatalf("DueQuestions after expiry = %+v, %v", due, err)
	}
}

// The typed-answer lookup finds the question pending for the sender only,
// and, after it was answered, the question a redelivered message answered.
func TestQuestionAnswerTarget(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "ops/telegram:-100"
	q := createQuestion(t, db, newQuestion(session, "call_1"))
	createQuestion(t, db, newQuestion("ops/telegram:-200", "call_1")) // another chat's

	if _, found, err := db.AnswerTarget(ctx, session, "telegram:7", "m1"); err != nil || found {
		t.Fatalf("AnswerTarget(someone else) = found %v, %v; want none", found, err)
	}
	got, found, err := db.AnswerTarget(ctx, session, "telegram:42", "m1")
	if err != nil || !found || got.ID != q.ID {
		t.Fatalf("AnswerTarget(asker) = %+v found %v, %v", got, found, err)
	}
	if _, changed, err := db.DecideQuestion(ctx, q.ID, askuser.Outcome{Status: askuser.StatusAnswered, Answer: "green", By: "telegram:42",
		How: askuser.ByText, ExternalID: "m1"}); err != nil || !changed {
		t.Fatalf("typed answer: changed %v, %v", changed, err)
	}
	// The agent asks again; the redelivered answer still names the first
	// question, a new message the second.
	second := createQuestion(t, db, newQuestion(session, "call_2"))
	got, found, err = db.AnswerTarget(ctx, session, "telegram:42", "m1")
	if err != nil || !found || got.ID != q.ID || got.AnswerExternalID != "m1" || got.Answer != "green" {
		t.Fatalf("AnswerTarget(redelivery) = %+v found %v, %v; want the answered question", got, found, err)
	}
	got, found, err = db.AnswerTarget(ctx, session, "telegram:42", "m2")
	if err != nil || !found || got.ID != second.ID {
		t.Fatalf("AnswerTarget(new message) = %+v found %v, %v; want the second question", got, found, err)
	}
	// No id: only a pending question matches.
	if _, changed, err := db.DecideQuestion(ctx, second.ID, askuser.Outcome{Status: askuser.StatusCancelled, By: "telegram:42"}); err != nil || !changed {
		t.Fatalf("cancel: changed %v, %v", changed, err)
	}
	if _, found, err := db.AnswerTarget(ctx, session, "telegram:42", ""); err != nil || found {
		t.Fatalf("AnswerTarget(no id, nothing pending) = found %v, %v", found, err)
	}
	pending, err := db.PendingQuestionsOf(ctx, session)
	if err != nil || len(pending) != 0 {
		t.Fatalf("PendingQuestionsOf = %+v, %v", pending, err)
	}
}

// Recovery leaves a session parked on a pending question alone and runs
// it once the question is answered (a crash between the answer and the
// resume).
func TestUnfinishedSkipsPendingQuestions(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "ops/telegram:42"
	calling := agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{
		{ID: "call_1", Name: askuser.ToolName, Arguments: json.RawMessage(`{"question":"Which colour?"}`)}}}
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "paint it"}, calling,
		agentcore.Message{Role: agentcore.RoleUser, Content: "someone else writes meanwhile"}); err != nil {
		t.Fatal(err)
	}
	q := createQuestion(t, db, newQuestion(session, "call_1"))
	unfinished := func() bool {
		t.Helper()
		list, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: -time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range list {
			if u.Session == session {
				return true
			}
		}
		return false
	}
	if unfinished() {
		t.Fatal("recovery would run a session parked on a pending question")
	}
	if _, changed, err := db.DecideQuestion(ctx, q.ID, askuser.Outcome{Status: askuser.StatusAnswered, Answer: "blue", By: "telegram:42", How: askuser.ByPress}); err != nil || !changed {
		t.Fatalf("answer: changed %v, %v", changed, err)
	}
	if !unfinished() {
		t.Fatal("recovery would not run a session whose question was answered")
	}
	// The answer counts as a write for recovery's quick looks, however
	// long ago the question was asked.
	if _, err := db.Pool().Exec(ctx, `UPDATE messages SET created_at = now() - interval '1 hour' WHERE session_key = $1`, session); err != nil {
		t.Fatal(err)
	}
	q2 := newQuestion(session, "call_2")
	if _, err := db.Pool().Exec(ctx, `UPDATE sessions SET updated_at = now() - interval '1 hour' WHERE key = $1`, session); err != nil {
		t.Fatal(err)
	}
	q2 = createQuestion(t, db, q2)
	if _, changed, err := db.DecideQuestion(ctx, q2.ID, askuser.Outcome{Status: askuser.StatusCancelled, By: "telegram:42"}); err != nil || !changed {
		t.Fatalf("cancel: changed %v, %v", changed, err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE questions SET answered_at = answered_at - interval '2 seconds' WHERE id = $1`, q2.ID); err != nil {
		t.Fatal(err)
	}
	recent, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: time.Second, WrittenWithin: 30 * time.Second})
	if err != nil || len(recent) != 1 || recent[0].Session != session {
		t.Fatalf("Unfinished(written within 30s) = %+v, %v; want the session whose question was settled", recent, err)
	}
}
