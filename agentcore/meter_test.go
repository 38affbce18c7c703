package agentcore_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// scriptedMeter refuses the model call number refuseAt (1-based; 0 never)
// and keeps what it is told.
type scriptedMeter struct {
	refuseAt int
	mu       sync.Mutex
	admits   []agentcore.MeteredCall
	records  []agentcore.Usage
}

func (m *scriptedMeter) Admit(_ context.Context, c agentcore.MeteredCall) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.admits = append(m.admits, c)
	if len(m.admits) == m.refuseAt {
		return &agentcore.RefusedError{Reply: "Budget used up: try tomorrow."}
	}
	return nil
}

func (m *scriptedMeter) Record(_ context.Context, _ agentcore.MeteredCall, u agentcore.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, u)
}

// TestMeterRefusalStoresTheReplyWithoutCallingTheModel: a refused first
// call never reaches the model; the refusal is the run's stored answer.
func TestMeterRefusalStoresTheReplyWithoutCallingTheModel(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	a := newAgent(t, llm, db)
	m := &scriptedMeter{refuseAt: 1}
	a.Meter = m
	call := tools.Call{Channel: "test", ChatID: "1", UserID: "test:42", Agent: "a", Session: "a/test:m1"}
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:m1", Call: call, User: &agentcore.Message{Content: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Budget used up: try tomorrow." {
		t.Errorf("run answered %q", res.Text)
	}
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
	if len(m.admits) != 1 || m.admits[0].Call.UserID != "test:42" || m.admits[0].Model != "m" || m.admits[0].Session != "a/test:m1" {
		t.Errorf("admitted = %+v", m.admits)
	}
	if len(m.records) != 0 {
		t.Errorf("a refused call was recorded: %+v", m.records)
	}
	msgs, err := db.Load(ctx, "a/test:m1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Role != agentcore.RoleAssistant || msgs[1].Content != res.Text {
		t.Errorf("stored = %+v", msgs)
	}
}

// TestMeterRecordsUsageAndRefusesAfterAToolStep: every model call is
// admitted first — the one after a tool step too — and each answered call
// is recorded with its usage.
func TestMeterRecordsUsageAndRefusesAfterAToolStep(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	a := newAgent(t, llm, db)
	m := &scriptedMeter{refuseAt: 2}
	a.Meter = m
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:m2", User: &agentcore.Message{Content: "time? CALL_TOOL:datetime"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(llm.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1 (the second was refused)", n)
	}
	if !strings.Contains(res.Text, "Budget used up") || len(m.admits) != 2 {
		t.Errorf("result %q after %d admits", res.Text, len(m.admits))
	}
	if len(m.records) != 1 || m.records[0].InputTokens <= 0 || m.records[0].OutputTokens <= 0 {
		t.Errorf("records = %+v, want the first call's usage", m.records)
	}
	msgs, err := db.Load(ctx, "a/test:m2", 0)
	if err != nil {
		t.Fatal(err)
	}
	roles := ""
	for _, msg := range msgs {
		roles += string(msg.Role) + " "
	}
	if roles != "user assistant tool assistant " || msgs[3].Content != res.Text {
		t.Errorf("stored roles = %q", roles)
	}
}
