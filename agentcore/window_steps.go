package agentcore

// windowSteps is how many parts of HistoryLimit the oldest messages of a
// full window are let go in.
const windowSteps = 4

// steppedWindow lets the oldest messages of a full history window go in
// steps rather than one at a time. A window that slid by each new message
// would start with another message on every model call, and a prompt whose
// start changes is never read from the provider's prompt cache. Here the
// window starts at the first seq that is a multiple of limit/windowSteps,
// so its start holds while that many messages arrive and the model is
// shown between limit - limit/windowSteps + 1 and limit messages. msgs are
// the newest limit messages of the session, oldest first; a window that is
// not full (the whole session) is returned as it is.
func steppedWindow(msgs []Message, limit int) []Message {
	step := int64(limit / windowSteps)
	if limit <= 0 || len(msgs) < limit || step <= 1 {
		return msgs
	}
	cut := (msgs[0].Seq + step - 1) / step * step
	for i, m := range msgs {
		if m.Seq >= cut {
			return msgs[i:]
		}
	}
	return msgs
}
