package tools

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
)

// ContextFiles are the files that shape an agent's system prompt. The fs
// tools keep them in the database, not on disk (seeds §3): for a
// predefined agent USER.md is per user and the rest per agent; for an open
// agent every file is per user, falling back to the agent's own.
var ContextFiles = []string{"SOUL.md", "IDENTITY.md", "AGENTS.md", "TOOLS.md", "USER.md", "BOOTSTRAP.md", "HEARTBEAT.md"}

// The agent kinds.
const (
	KindPredefined = "predefined"
	KindOpen       = "open"
)

// DocKey names one stored document: an agent's, in a scope ("" for the
// agent itself, "user:ID" for one person, "chat:ADDRESS" for one chat),
// at a path ("SOUL.md", "memory/notes.md").
type DocKey struct {
	Agent, Scope, Path string
}

// MemoryHit is one memory_search result.
type MemoryHit struct {
	Path, Scope, Snippet string
	Rank                 float64
}

// ErrNoDoc is returned by DocStore.GetDoc for a missing document.
var ErrNoDoc = errors.New("no such document")

// DocStore keeps context files and memory documents; Postgres implements
// it (full-text indexed), shared by every replica.
type DocStore interface {
	GetDoc(ctx context.Context, key DocKey) (string, error)
	// PutDoc stores content; empty content deletes the document.
	PutDoc(ctx context.Context, key DocKey, content string) error
	// GetDocs returns, in one read, the agent's documents at any of paths
	// in any of scopes, by scope and then path.
	GetDocs(ctx context.Context, agent string, scopes, paths []string) (map[string]map[string]string, error)
	// SearchMemory ranks the memory documents of agent in scopes that
	// match query, best first.
	SearchMemory(ctx context.Context, agent string, scopes []string, query string, limit int) ([]MemoryHit, error)
}

// IsContextFile reports whether the clean workspace path p is a context
// file (at the workspace root).
func IsContextFile(p string) bool {
	for _, f := range ContextFiles {
		if p == f {
			return true
		}
	}
	return false
}

// IsMemoryPath reports whether p is a memory document: MEMORY.md,
// memory.md or a Markdown file under memory/.
func IsMemoryPath(p string) bool {
	return p == "MEMORY.md" || p == "memory.md" || strings.HasPrefix(p, "memory/") && path.Ext(p) == ".md"
}

// UserScope and ChatScope name the per-user and per-chat scopes.
func UserScope(identity string) string { return "user:" + identity }

// ChatScope names a chat's scope.
func ChatScope(c Call) string {
	s := "chat:" + c.Channel + ":" + c.ChatID
	if c.ThreadID != "" {
		s += ":" + c.ThreadID
	}
	return s
}

// DocScopes returns where a document of path lives for the call: the
// scope written to, then the scopes read from in order.
func DocScopes(kind string, c Call, p string) (write string, read []string) {
	write = scopesOf(c).own(kind, p)
	if write == "" {
		return "", []string{""}
	}
	return write, []string{write, ""}
}

// callScopes are a call's per-user and per-chat scope names, built once
// for every document a call looks at.
type callScopes struct{ user, chat string }

func scopesOf(c Call) callScopes { return callScopes{user: UserScope(c.UserID), chat: ChatScope(c)} }

// own returns the scope a document of path p is written to for the call,
// and read from first: "" when it is the agent's own, read from nowhere
// else.
func (s callScopes) own(kind, p string) string {
	switch {
	case IsMemoryPath(p) && kind == KindOpen:
		return s.user
	case IsMemoryPath(p):
		return s.chat
	case kind == KindOpen, p == "USER.md":
		return s.user
	}
	return ""
}

// ContextPrompt renders the context files the call's agent has for the
// call (see ContextFiles for who sees which) as system prompt sections,
// in ContextFiles order; "" when there are none. It runs before every
// model call, so it works out each file's scope once.
func ContextPrompt(ctx context.Context, docs DocStore, kind string, c Call) (string, error) {
	names := scopesOf(c)
	own := make([]string, len(ContextFiles))
	// Every scope any context file may come from, read in one query.
	scopes := make([]string, 0, 3)
	for i, name := range ContextFiles {
		own[i] = names.own(kind, name)
		for _, sc := range [2]string{own[i], ""} {
			if !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
	}
	found, err := docs.GetDocs(ctx, c.Agent, scopes, ContextFiles)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, name := range ContextFiles {
		text, ok := found[own[i]][name]
		if !ok && own[i] != "" {
			text, ok = found[""][name]
		}
		if text = strings.TrimSpace(text); !ok || text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + name + "\n" + text)
	}
	return b.String(), nil
}

// Embedder turns texts into vectors (an embeddings model), for memory
// search by meaning.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// VectorStore is implemented by a DocStore that also keeps a vector per
// memory document.
type VectorStore interface {
	// SetDocVector stores the vector of the document at key.
	SetDocVector(ctx context.Context, key DocKey, vec []float32) error
	// NearestMemory ranks agent's memory documents in scopes by cosine
	// similarity to vec, best first.
	NearestMemory(ctx context.Context, agent string, scopes []string, vec []float32, limit int) ([]MemoryHit, error)
}
