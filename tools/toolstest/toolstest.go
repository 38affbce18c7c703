// Package toolstest is what the tests of the tool framework and its
// families share: an Approver that records what it is asked, and the
// conversation their calls run in.
package toolstest

import (
	"context"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// Approver records what a tool asks and answers with a fixed decision.
type Approver struct {
	mu sync.Mutex
	// Decision answers every request.
	Decision tools.Decision
	// Always holds the patterns already always allowed.
	Always map[string]bool
	// AlwaysErr and ApproveErr, when set, are returned by AlwaysAllowed
	// and Approve.
	AlwaysErr, ApproveErr error
	// Block makes Approve wait for its context to end.
	Block    bool
	asked    []string
	requests []tools.ApprovalRequest
}

// AlwaysAllowed implements tools.Approver.
func (a *Approver) AlwaysAllowed(_ context.Context, tool, pattern string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, tool+"\x00"+pattern)
	return a.Always[pattern], a.AlwaysErr
}

// Approve implements tools.Approver.
func (a *Approver) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a.mu.Lock()
	a.requests = append(a.requests, req)
	block := a.Block
	a.mu.Unlock()
	if block {
		<-ctx.Done()
		return tools.Denied, ctx.Err()
	}
	return a.Decision, a.ApproveErr
}

// Calls returns how many always-allowed look-ups were made and the
// requests asked, in order.
func (a *Approver) Calls() (asked int, requests []tools.ApprovalRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked), append([]tools.ApprovalRequest(nil), a.requests...)
}

// Call is the conversation the tests' tool calls run in.
var Call = tools.Call{
	Channel: "telegram", ChatID: "42", PeerKind: "group", UserID: "telegram:7",
	Session: "telegram:42", Agent: "main", ToolCallID: "call-1",
}

// Context returns a context carrying Call.
func Context() context.Context { return tools.WithCall(context.Background(), Call) }

// Must fails the test at once on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
