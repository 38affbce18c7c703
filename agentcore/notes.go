package agentcore

import (
	"slices"
	"strings"
)

// Notes and notices are assistant messages of a session that are not the
// model's own turns. Both carry an ExternalID, which History keeps unique
// per session and which recovery reads as "not a reply to deliver", so
// neither is ever sent to the chat as an undelivered reply; the prefix of
// that id says which one it is.
//
//   - A note is context for the model (a handoff's who, why and last
//     messages). A model call gets it as a user message, not as its own
//     words, and a note ahead of the window's first user message is kept
//     (the receiving agent's note comes before anyone wrote to it).
//   - A notice was said to the people by the daemon, not by the model (a
//     failed run's apology). It stays in the session so the message it
//     answers counts as answered, but no model call is shown it.
const (
	notePrefix   = "note:"
	noticePrefix = "notice:"
	// legacyNotePrefix marks the handoff notes stored before notes had a
	// prefix of their own; they are notes all the same.
	legacyNotePrefix = "handoff-note:"
)

// Note returns a note for the model with text, id unique in its session.
func Note(id, text string) Message {
	return Message{Role: RoleAssistant, Content: text, ExternalID: notePrefix + id}
}

// Notice returns a notice to the people with text, id unique in its
// session.
func Notice(id, text string) Message {
	return Message{Role: RoleAssistant, Content: text, ExternalID: noticePrefix + id}
}

// IsNote reports whether m is a note for the model (see Note).
func (m Message) IsNote() bool {
	return m.Role == RoleAssistant && (strings.HasPrefix(m.ExternalID, notePrefix) || strings.HasPrefix(m.ExternalID, legacyNotePrefix))
}

// IsNotice reports whether m is a notice the model is never shown (see
// Notice).
func (m Message) IsNotice() bool {
	return m.Role == RoleAssistant && strings.HasPrefix(m.ExternalID, noticePrefix)
}

// forModel returns the messages a model call is given for the window
// msgs: each note as a user message in its place, since what it quotes was
// said by people and by another agent (the system prompt would lend it an
// authority its authors do not have), and no notice. msgs itself is not
// changed: the run stores its steps after the window's last seq, notices
// included.
func forModel(msgs []Message) []Message {
	if !slices.ContainsFunc(msgs, func(m Message) bool { return m.IsNote() || m.IsNotice() }) {
		return msgs // the common case: no copy per model call
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.IsNote():
			out = append(out, Message{Role: RoleUser, Content: m.Content, Seq: m.Seq})
		case !m.IsNotice():
			out = append(out, m)
		}
	}
	return out
}
