package agentcore

import "fmt"

// QueueMode says what happens to a message that arrives while the agent is
// working on its session (conversation.queue).
type QueueMode string

// The queue modes.
const (
	// QueueSteer: the running loop sees the message at its next model call.
	QueueSteer QueueMode = "steer"
	// QueueFollowup: each waiting message gets a run of its own, in order,
	// after the current one.
	QueueFollowup QueueMode = "followup"
	// QueueCollect: all waiting messages go to the model together, in one
	// run after the current one.
	QueueCollect QueueMode = "collect"
)

// ParseQueueMode checks s; "" is QueueSteer.
func ParseQueueMode(s string) (QueueMode, error) {
	switch m := QueueMode(s); m {
	case "":
		return QueueSteer, nil
	case QueueSteer, QueueFollowup, QueueCollect:
		return m, nil
	}
	return "", fmt.Errorf("conversation queue %q: want steer, followup or collect", s)
}

// The stored order of a session is the order the model saw it: the agent
// inserts each step right after the messages it was given, and user
// messages that arrived meanwhile move behind that step (History.Insert).
// So messages the model has not seen yet are always the trailing user
// messages, and whether a run is needed follows from the tail alone:
//
//   - trailing user messages after a final reply (or at the start) open a
//     new turn: steer and collect admit all of them, followup the first;
//   - trailing user messages after a tool step arrived mid-turn: steer
//     admits them at the next model call, followup and collect keep them
//     waiting until the turn ends.
//
// A run ends when the view it may show the model ends with a final reply
// and no admitted message is left: every user message is answered.

// view returns the part of msgs (a session window, in stored order) the
// model may see now under mode.
func view(msgs []Message, mode QueueMode) []Message {
	i := len(msgs)
	for i > 0 && msgs[i-1].Role == RoleUser {
		i--
	}
	if i == len(msgs) {
		return msgs
	}
	turnOver := i == 0 || isFinalReply(msgs[i-1])
	switch {
	case mode == QueueSteer || mode == "":
		return msgs
	case !turnOver:
		return msgs[:i]
	case mode == QueueFollowup:
		return msgs[:i+1]
	}
	return msgs
}

// isFinalReply reports whether m is an assistant message that calls no tools.
func isFinalReply(m Message) bool { return m.Role == RoleAssistant && len(m.ToolCalls) == 0 }

// lastSeq is the highest seq in msgs: where the next step goes.
func lastSeq(msgs []Message) int64 {
	var s int64
	for _, m := range msgs {
		s = max(s, m.Seq)
	}
	return s
}
