package slack

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

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
	l.authors.Add(channel+" "+ts, a)
}

// author returns who wrote the first of tss in channel that is known.
func (l *liveState) author(channel string, tss ...string) (author, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ts := range tss {
		if a, ok := l.authors.Get(channel + " " + ts); ok && ts != "" {
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
	return l.msgs.Get(ts)
}

// set records live message ts.
func (l *liveState) set(ts string, m liveMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.Add(ts, m)
}

// drop forgets live message ts.
func (l *liveState) drop(ts string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.Remove(ts)
}

// holders returns the messages that hold an answer's parts after an
// earlier FinishLive (key finishKey), or nil.
func (l *liveState) holders(key string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids, _ := l.finished.Get(key)
	return append([]string(nil), ids...)
}

// hold records the messages now holding an answer's parts.
func (l *liveState) hold(key string, ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finished.Add(key, append([]string(nil), ids...))
}

// bounded is a map that forgets its least recently used entries beyond
// maxEntries.
type bounded[V any] = *lru.Cache[string, V]

func newBounded[V any](maxEntries int) bounded[V] {
	c, err := lru.New[string, V](maxEntries)
	if err != nil {
		panic(err) // only for a size below 1: the sizes are constants
	}
	return c
}
