package slack

import "sync"

// Bounds on what the adapter remembers of live answers: an answer that
// never finishes (a crash elsewhere, a lost outbox row) must not grow
// memory without end.
const (
	maxLiveMessages = 1024 // live messages begun and not finished
	maxFinished     = 512  // finished answers, so that FinishLive again doubles nothing
	maxAuthors      = 4096 // people's recent messages, whom a stream in a channel is for
)

// liveMsg is what the adapter knows of one live message.
type liveMsg struct {
	stream bool   // a chat.startStream stream not stopped yet
	shown  string // stream: the Markdown appended so far (appendStream only adds)
}

// author is who wrote a message: chat.startStream outside direct
// messages names the person the stream is for.
type author struct {
	user, team string
}

// liveState is the adapter's memory of live answers, safe for concurrent
// use.
type liveState struct {
	mu sync.Mutex
	// refused is the error by which the workspace refused Slack's
	// streaming methods; once set, live answers are posted and edited.
	refused  string
	msgs     bounded[liveMsg]
	finished bounded[[]string] // channel+" "+first live ts → messages now holding the parts
	authors  bounded[author]   // channel+" "+ts → who wrote it
}

func (l *liveState) init() {
	l.msgs = newBounded[liveMsg](maxLiveMessages)
	l.finished = newBounded[[]string](maxFinished)
	l.authors = newBounded[author](maxAuthors)
}

// wrote remembers who wrote message ts in channel.
func (l *liveState) wrote(channel, ts string, a author) {
	if channel == "" || ts == "" || a.user == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.authors.put(channel+" "+ts, a)
}

// author returns who wrote the first of tss in channel that is known.
func (l *liveState) author(channel string, tss ...string) (author, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ts := range tss {
		if a, ok := l.authors.get(channel + " " + ts); ok && ts != "" {
			return a, true
		}
	}
	return author{}, false
}

// refusal returns the error by which the workspace refused streaming, ""
// while streaming is to be tried.
func (l *liveState) refusal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// refuse remembers that the workspace refused streaming with code, and
// reports whether this is the first refusal.
func (l *liveState) refuse(code string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.refused == ""
	if first {
		l.refused = code
	}
	return first
}

// get returns what is known of live message ts.
func (l *liveState) get(ts string) (liveMsg, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgs.get(ts)
}

// set records live message ts.
func (l *liveState) set(ts string, m liveMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.put(ts, m)
}

// drop forgets live message ts.
func (l *liveState) drop(ts string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.del(ts)
}

// holders returns the messages that hold an answer's parts after an
// earlier FinishLive (key finishKey), or nil.
func (l *liveState) holders(key string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids, _ := l.finished.get(key)
	return append([]string(nil), ids...)
}

// hold records the messages now holding an answer's parts.
func (l *liveState) hold(key string, ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finished.put(key, append([]string(nil), ids...))
}

// bounded is a map that forgets its oldest entries beyond max.
type bounded[V any] struct {
	max   int
	m     map[string]V
	order []string // keys, oldest first; may hold deleted or re-put keys
}

func newBounded[V any](maxEntries int) bounded[V] {
	return bounded[V]{max: maxEntries, m: map[string]V{}}
}

func (b *bounded[V]) get(k string) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

func (b *bounded[V]) put(k string, v V) {
	if _, ok := b.m[k]; !ok {
		b.order = append(b.order, k)
	}
	b.m[k] = v
	for len(b.m) > b.max && len(b.order) > 0 {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
	if len(b.order) > 2*b.max {
		b.compact()
	}
}

func (b *bounded[V]) del(k string) {
	delete(b.m, k)
	if len(b.order) > 2*b.max || len(b.m) == 0 {
		b.compact()
	}
}

// compact drops keys no longer in the map from order.
func (b *bounded[V]) compact() {
	kept := b.order[:0:0]
	seen := map[string]bool{}
	for _, k := range b.order {
		if _, ok := b.m[k]; ok && !seen[k] {
			kept = append(kept, k)
			seen[k] = true
		}
	}
	b.order = kept
}
