package knowledge

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// Job is one queued memory document, as claimed: the document's key, the
// queue row's generation (a newer write of the document makes a new one),
// the attempts so far (this one included), and the document's content and
// its hash at claim time (Exists false when it is gone).
type Job struct {
	Key        tools.DocKey
	Generation int64
	Attempts   int
	Exists     bool
	Content    string
	Hash       string
}

// JobStore is the extraction queue and the facts it produces; PostgreSQL
// implements it, the queue filled by triggers on every write of a memory
// document.
type JobStore interface {
	// ClaimJobs claims up to limit due jobs with fewer than maxAttempts
	// attempts, each for lease, skipping those another worker holds.
	ClaimJobs(ctx context.Context, limit int, lease time.Duration, maxAttempts int) ([]Job, error)
	// ReplaceFacts replaces the facts of the document at key with f in one
	// transaction, if its content still has hash; otherwise (the document
	// changed or is gone since the claim) it writes nothing and reports
	// false.
	ReplaceFacts(ctx context.Context, key tools.DocKey, hash string, f Facts) (bool, error)
	// FinishJob removes j's queue row unless the document was written
	// again since j was claimed.
	FinishJob(ctx context.Context, j Job) error
	// RetryJob makes j due again after the delay, noting why; refund takes
	// back the attempt the claim counted (a budget refusal, a shutdown).
	// A row written again since the claim is left as it is.
	RetryJob(ctx context.Context, j Job, after time.Duration, refund bool, reason string) error
}

// Query is one graph search: entities whose key contains any of Terms
// (normalized with Key), and those up to Depth relations away.
type Query struct {
	Terms []string
	Depth int
	// MaxEntities and MaxRelations bound the answer.
	MaxEntities, MaxRelations int
}

// Node is one entity of a search's answer, Depth relations from a match.
type Node struct {
	Key, Name, Type string
	Depth           int
}

// Edge is one relation of a search's answer, with the document it came
// from (its scope and path).
type Edge struct {
	From, To, Type string
	Scope, Path    string
}

// Graph is a search's answer; MoreNodes and MoreEdges say it was cut at
// the query's bounds.
type Graph struct {
	Nodes                []Node
	Edges                []Edge
	MoreNodes, MoreEdges bool
}

// GraphStore searches the graph of an agent's scopes.
type GraphStore interface {
	// SearchGraph answers q over the facts of agent's documents in scopes
	// only; nodes nearest a match first.
	SearchGraph(ctx context.Context, agent string, scopes []string, q Query) (Graph, error)
}
