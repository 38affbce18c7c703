package postgres_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestDecisionMessages(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	toApprover := channels.Address{Platform: "telegram", ChatID: "7"}
	toRequester := channels.Address{Platform: "telegram", ChatID: "-100", ThreadID: "5"}
	approverMsg, err := db.Enqueue(ctx, bot.OutboxMessage{To: toApprover, Text: "allow?"})
	if err != nil {
		t.Fatal(err)
	}
	requesterMsg, err := db.Enqueue(ctx, bot.OutboxMessage{To: toRequester, Text: "waiting…"})
	if err != nil {
		t.Fatal(err)
	}
	otherMsg, err := db.Enqueue(ctx, bot.OutboxMessage{To: toApprover, Text: "other"})
	if err != nil {
		t.Fatal(err)
	}

	// Added out of order and twice: listed once each, by outbox id.
	for _, add := range []struct {
		kind, subject string
		id            int64
		role          string
	}{
		{approvals.Kind, "ap-1", requesterMsg, "requester"},
		{approvals.Kind, "ap-1", approverMsg, "approver"},
		{approvals.Kind, "ap-1", approverMsg, "approver"},
		{access.KindRequest, "ap-1", otherMsg, "approver"}, // same id, other kind
		{approvals.Kind, "ap-2", otherMsg, "approver"},
	} {
		if err := db.AddDecisionMessage(ctx, add.kind, add.subject, add.id, add.role); err != nil {
			t.Fatalf("AddDecisionMessage(%+v): %v", add, err)
		}
	}
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: bot.OutboxRow{ID: approverMsg}, PlatformMessageID: "555"}}); err != nil {
		t.Fatal(err)
	}

	got, err := db.DecisionMessagesOf(ctx, approvals.Kind, "ap-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []bot.DecisionMessage{
		{OutboxID: approverMsg, Role: "approver", To: toApprover, PlatformMessageID: "555"},
		{OutboxID: requesterMsg, Role: "requester", To: toRequester, PlatformMessageID: ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DecisionMessagesOf = %+v\nwant %+v", got, want)
	}
	if none, err := db.DecisionMessagesOf(ctx, approvals.Kind, "ap-unknown"); err != nil || len(none) != 0 {
		t.Errorf("DecisionMessagesOf(unknown) = %v, %v; want none", none, err)
	}
	if err := db.AddDecisionMessage(ctx, approvals.Kind, "ap-1", otherMsg+1000, "approver"); err == nil {
		t.Error("AddDecisionMessage with an unknown outbox id succeeded")
	}
	if err := db.AddDecisionMessage(ctx, "", "ap-1", approverMsg, "approver"); err == nil {
		t.Error("AddDecisionMessage without a kind succeeded")
	}
}
