// Package tools is the tool framework, what an agent can do besides
// talking: the Tool interface with its side-effect class, the per-call
// context (Call), the Registry that runs tool calls with rate limiting and
// credential scrubbing, policy, and the approval gate. The tool families
// are packages of their own below it (fs, web, exec, memory, sessions,
// mcp); they import this one, never the other way.
package tools

import (
	"context"
	"encoding/json"
)

// SideEffect classifies what running a tool can change, so policy can decide
// which calls need a human's approval.
type SideEffect int

const (
	// SideEffectNone: pure computation or reads of the agent's own state.
	SideEffectNone SideEffect = iota
	// SideEffectReadOnly: reads outside state (files, APIs) without changing it.
	SideEffectReadOnly
	// SideEffectMutating: writes files or records.
	SideEffectMutating
	// SideEffectNetwork: reaches out to the network or runs arbitrary programs.
	SideEffectNetwork
	// SideEffectBlocking: waits on or stops other work.
	SideEffectBlocking
	// SideEffectSpawns: starts other agents or long-running processes.
	SideEffectSpawns
)

// String returns the class name used in logs and policy config.
func (s SideEffect) String() string {
	switch s {
	case SideEffectNone:
		return "none"
	case SideEffectReadOnly:
		return "read_only"
	case SideEffectMutating:
		return "mutating"
	case SideEffectNetwork:
		return "network"
	case SideEffectBlocking:
		return "blocking"
	case SideEffectSpawns:
		return "spawns"
	}
	return "unknown"
}

// Tool is one capability offered to the LLM. Its Name, Description and
// Parameters stay the same once it is registered: the registry describes it
// to the model from the first answers.
type Tool interface {
	// Name is the identifier the LLM calls the tool by.
	Name() string
	// Description tells the LLM what the tool does and when to use it.
	Description() string
	// Parameters is the JSON schema of the arguments object.
	Parameters() json.RawMessage
	// SideEffect classifies the tool's risk.
	SideEffect() SideEffect
	// Execute runs the tool. Per-call values (chat, session…) come from ctx;
	// see CallFrom. A failure the LLM should see is a Result with IsError set;
	// a returned error is reported the same way.
	Execute(ctx context.Context, args json.RawMessage) Result
}

// Result is what a tool call produced.
type Result struct {
	ForLLM  string // fed back to the model
	ForUser string // optional, shown to the user as-is (after scrubbing)
	IsError bool
	// Waiting, when set, means the call has no result yet: it waits for a
	// human (an approval). The run parks without recording a result and
	// makes the same call again when it is resumed.
	Waiting *Waiting
}

// ErrorResult builds an error Result for the LLM.
func ErrorResult(msg string) Result { return Result{ForLLM: msg, IsError: true} }

// MaxMessageText bounds the text of one message a tool posts: to a chat
// (message), a session (sessions_send) or a teammate (team_message).
const MaxMessageText = 8000

// Spec is the description of a tool as sent to an LLM provider.
type Spec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}
