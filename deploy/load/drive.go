package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// load sends numbered messages ("m<index>") through the Telegram fake and
// matches each reply of the scripted model ("echo: m<index> …") to its
// message, so a reply counts only for the message it answers.
type load struct {
	tg    telegram
	sent  []time.Time // by index: when the message was queued at the fake
	got   []time.Time // by index: when its reply reached the fake
	reply chan int    // indexes as replies arrive; -1 for a reply that answers nothing

	mu  sync.Mutex
	odd []string // replies that answer no message, or one already answered
}

// newLoad watches tg's sent messages for the replies to total messages.
func newLoad(tg telegram, total int) *load {
	l := &load{tg: tg, sent: make([]time.Time, total), got: make([]time.Time, total), reply: make(chan int, total+1)}
	tg.Watch(l.watch)
	return l
}

// watch runs for every message the daemon sends.
func (l *load) watch(text string) {
	now := time.Now()
	idx, ok := replyIndex(text)
	if ok && idx < len(l.got) {
		l.mu.Lock()
		fresh := l.got[idx].IsZero() && !l.sent[idx].IsZero()
		if fresh {
			l.got[idx] = now
		}
		l.mu.Unlock()
		if fresh {
			l.reply <- idx
			return
		}
	}
	if strings.HasPrefix(text, "echo: ") || ok {
		l.mu.Lock()
		l.odd = append(l.odd, text)
		l.mu.Unlock()
		select {
		case l.reply <- -1:
		default:
		}
	}
	// Anything else (a progress note on a slow run) is not a reply.
}

// replyIndex reads the message index out of the scripted model's echo,
// "echo: m<index> (history: …)".
func replyIndex(text string) (int, bool) {
	rest, ok := strings.CutPrefix(text, "echo: m")
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(digits)
	return n, err == nil && n >= 0
}

// drive sends n messages numbered first… from chats, at most one unanswered
// per chat and inflight in all, and waits for every reply. It returns how
// long that took.
func (l *load) drive(ctx context.Context, first, n, inflight int, chats []int64, stall time.Duration) (time.Duration, error) {
	free := slices.Clone(chats)
	chatOf := make(map[int]int64, inflight)
	next := first
	launch := func() {
		chat := free[0]
		free = free[1:]
		chatOf[next] = chat
		l.mu.Lock()
		l.sent[next] = time.Now()
		l.mu.Unlock()
		l.tg.SendText(chat, chat, "User "+strconv.FormatInt(chat, 10), "m"+strconv.Itoa(next))
		next++
	}
	began := time.Now()
	for next < first+n && len(free) > 0 && next-first < inflight {
		launch()
	}
	timer := time.NewTimer(stall)
	defer timer.Stop()
	for got := 0; got < n; {
		select {
		case idx := <-l.reply:
			if idx < 0 {
				return 0, fmt.Errorf("replies that answer no message sent, or one twice: %q", l.unexpected())
			}
			chat, ok := chatOf[idx]
			if !ok {
				return 0, fmt.Errorf("a reply to message %d, which this round did not send", idx)
			}
			delete(chatOf, idx)
			got++
			free = append(free, chat)
			if next < first+n {
				launch()
			}
			timer.Reset(stall)
		case <-timer.C:
			return 0, fmt.Errorf("no reply for %s: %d of %d messages answered (is the daemon's log saying why?)", stall, got, n)
		case <-ctx.Done():
			return 0, fmt.Errorf("%d of %d messages answered: %w", got, n, ctx.Err())
		}
	}
	return time.Since(began), nil
}

// latencies returns the reply latencies of messages first…first+n-1.
func (l *load) latencies(first, n int) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]time.Duration, 0, n)
	for i := first; i < first+n; i++ {
		out = append(out, l.got[i].Sub(l.sent[i]))
	}
	return out
}

// unexpected returns the replies that answered no message sent, or one
// already answered.
func (l *load) unexpected() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.odd)
}
