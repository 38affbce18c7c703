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

// isContextFile reports whether the clean workspace path p is a context
// file (at the workspace root).
func isContextFile(p string) bool {
	for _, f := range ContextFiles {
		if p == f {
			return true
		}
	}
	return false
}

// isMemoryPath reports whether p is a memory document: MEMORY.md,
// memory.md or a Markdown file under memory/.
func isMemoryPath(p string) bool {
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

// docScopes returns where a document of path lives for the call: the
// scope written to, then the scopes read from in order.
func docScopes(kind string, c Call, p string) (write string, read []string) {
	user := UserScope(c.UserID)
	switch {
	case isMemoryPath(p) && kind == KindOpen:
		return user, []string{user, ""}
	case isMemoryPath(p):
		chat := ChatScope(c)
		return chat, []string{chat, ""}
	case kind == KindOpen, p == "USER.md":
		return user, []string{user, ""}
	}
	return "", []string{""}
}

// ContextPrompt renders the context files the call's agent has for the
// call (see ContextFiles for who sees which) as system prompt sections,
// in ContextFiles order; "" when there are none.
func ContextPrompt(ctx context.Context, docs DocStore, kind string, c Call) (string, error) {
	// Every scope any context file may come from, read in one query.
	var scopes []string
	for _, name := range ContextFiles {
		_, read := docScopes(kind, c, name)
		for _, sc := range read {
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
	for _, name := range ContextFiles {
		_, read := docScopes(kind, c, name)
		for _, scope := range read {
			text, ok := found[scope][name]
			if !ok {
				continue
			}
			if strings.TrimSpace(text) != "" {
				if b.Len() > 0 {
					b.WriteString("\n\n")
				}
				b.WriteString("## " + name + "\n" + strings.TrimSpace(text))
			}
			break
		}
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
