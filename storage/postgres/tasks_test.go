package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/teams"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestTaskClaimHasExactlyOneWinner(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	task, err := db.CreateTask(ctx, teams.Task{Team: "incident", Subject: "restart the cache", CreatedBy: "lead"})
	if err != nil || task.Status != teams.TaskPending {
		t.Fatalf("create = %+v, %v", task, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners, taken := 0, 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.ClaimTask(ctx, "incident", task.ID, fmt.Sprintf("member-%d", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners++
			case errors.Is(err, teams.ErrTaskTaken):
				taken++
			default:
				t.Errorf("claim %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if winners != 1 || taken != 19 {
		t.Fatalf("%d winners, %d told it was taken; want 1 and 19", winners, taken)
	}
	got, _, _ := db.GetTask(ctx, "incident", task.ID)
	if got.Status != teams.TaskInProgress || got.Owner == "" {
		t.Fatalf("after the claims: %+v", got)
	}
	if _, err := db.ClaimTask(ctx, "other-team", task.ID, "x"); !errors.Is(err, teams.ErrNoTask) {
		t.Fatalf("claim through another team: %v", err)
	}
}

func TestTaskDependenciesUnblockInOrder(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a, _ := db.CreateTask(ctx, teams.Task{Team: "t", Subject: "gather logs", CreatedBy: "lead"})
	b, _ := db.CreateTask(ctx, teams.Task{Team: "t", Subject: "find the cause", BlockedBy: []int64{a.ID}, CreatedBy: "lead"})
	c, _ := db.CreateTask(ctx, teams.Task{Team: "t", Subject: "write the report", BlockedBy: []int64{a.ID, b.ID}, Assignee: "writer", CreatedBy: "lead"})
	if b.Status != teams.TaskBlocked || c.Status != teams.TaskBlocked {
		t.Fatalf("dependants should start blocked: %s %s", b.Status, c.Status)
	}
	if _, err := db.CreateTask(ctx, teams.Task{Team: "t", Subject: "x", BlockedBy: []int64{999999}, CreatedBy: "lead"}); err == nil {
		t.Fatal("a task blocked by a task of no board was created")
	}
	if _, err := db.ClaimTask(ctx, "t", b.ID, "m1"); !errors.Is(err, teams.ErrTaskTaken) {
		t.Fatalf("claiming a blocked task: %v", err)
	}
	if _, err := db.ClaimTask(ctx, "t", a.ID, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CompleteTask(ctx, "t", a.ID, "m2", "done"); !errors.Is(err, teams.ErrNotOwner) {
		t.Fatalf("completing another's task: %v", err)
	}
	_, unblocked, err := db.CompleteTask(ctx, "t", a.ID, "m1", "logs in /tmp/logs")
	if err != nil || len(unblocked) != 1 || unblocked[0].ID != b.ID {
		t.Fatalf("completing a unblocked %+v, %v; want only b (c also waits for b)", unblocked, err)
	}
	if _, err := db.ClaimTask(ctx, "t", b.ID, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ProgressTask(ctx, "t", b.ID, "m1", 50, "halfway"); err != nil {
		t.Fatal(err)
	}
	_, unblocked, err = db.CompleteTask(ctx, "t", b.ID, "m1", "a bad deploy")
	if err != nil || len(unblocked) != 1 || unblocked[0].ID != c.ID || unblocked[0].Assignee != "writer" {
		t.Fatalf("completing b unblocked %+v, %v; want c for writer", unblocked, err)
	}
	if _, err := db.ClaimTask(ctx, "t", c.ID, "m1"); !errors.Is(err, teams.ErrTaskTaken) {
		t.Fatalf("a task assigned to writer was claimed by m1: %v", err)
	}
	if _, err := db.ClaimTask(ctx, "t", c.ID, "writer"); err != nil {
		t.Fatal(err)
	}
}

func TestTaskBlockerCommentsAndSearch(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	task, _ := db.CreateTask(ctx, teams.Task{Team: "t", Subject: "Rotate the database credentials",
		Description: "Postgres passwords for the billing service", Priority: 5, CreatedBy: "lead"})
	other, _ := db.CreateTask(ctx, teams.Task{Team: "t", Subject: "Update the docs", CreatedBy: "lead"})
	if _, err := db.CommentTask(ctx, "t", task.ID, "m1", "note", "starting after lunch"); err != nil {
		t.Fatal(err)
	}
	failed, err := db.CommentTask(ctx, "t", task.ID, "m1", "blocker", "no access to the vault")
	if err != nil || failed.Status != teams.TaskFailed {
		t.Fatalf("blocker = %+v, %v", failed, err)
	}
	got, comments, err := db.GetTask(ctx, "t", task.ID)
	if err != nil || got.Status != teams.TaskFailed || len(comments) != 2 || comments[1].Kind != "blocker" {
		t.Fatalf("task %+v comments %+v err %v", got, comments, err)
	}
	if _, err := db.CommentTask(ctx, "t", task.ID, "m1", "blocker", "again"); !errors.Is(err, teams.ErrTaskClosed) {
		t.Fatalf("a second blocker on a failed task: %v", err)
	}
	hits, err := db.SearchTasks(ctx, "t", "billing passwords", 10)
	if err != nil || len(hits) != 1 || hits[0].ID != task.ID {
		t.Fatalf("search = %+v, %v", hits, err)
	}
	active, _ := db.ListTasks(ctx, "t", teams.TaskFilter{})
	all, _ := db.ListTasks(ctx, "t", teams.TaskFilter{Status: "all"})
	if len(active) != 1 || active[0].ID != other.ID || len(all) != 2 {
		t.Fatalf("active %+v all %d", active, len(all))
	}
	if _, err := db.CancelTask(ctx, "t", other.ID, "lead"); err != nil {
		t.Fatal(err)
	}
	entries, err := db.Audit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.SubjectKind == "task" {
			actions = append(actions, e.Action)
		}
	}
	for _, want := range []string{"task.created", "task.comment.note", "task.comment.blocker", "task.cancelled"} {
		found := false
		for _, a := range actions {
			found = found || a == want
		}
		if !found {
			t.Errorf("audit lacks %s: %v", want, actions)
		}
	}
}
