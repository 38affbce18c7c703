package telegram

import (
	"sync"

	"github.com/go-telegram/bot/models"
)

// chatLanes runs the handling of updates concurrently across chats and one
// at a time, in arrival order, within a chat: a chat's button presses are
// handled in order with its messages. At most limit chats are handled at
// once.
type chatLanes struct {
	slots chan struct{} // one token per chat being handled

	mu sync.Mutex
	// queued holds each chat's work not yet started; a chat is present
	// while its lane goroutine runs, even with nothing left queued.
	queued map[int64][]func()
	wg     sync.WaitGroup
}

func newChatLanes(limit int) *chatLanes {
	return &chatLanes{slots: make(chan struct{}, max(limit, 1)), queued: map[int64][]func(){}}
}

// submit queues work behind the earlier work of chat, starting the chat's
// lane if it has none.
func (l *chatLanes) submit(chat int64, work func()) {
	l.mu.Lock()
	q, running := l.queued[chat]
	l.queued[chat] = append(q, work)
	if !running {
		l.wg.Add(1)
	}
	l.mu.Unlock()
	if !running {
		go l.run(chat)
	}
}

// run drains chat's queue in order, holding one slot while it does.
func (l *chatLanes) run(chat int64) {
	defer l.wg.Done()
	l.slots <- struct{}{}
	defer func() { <-l.slots }()
	for {
		l.mu.Lock()
		q := l.queued[chat]
		if len(q) == 0 {
			delete(l.queued, chat)
			l.mu.Unlock()
			return
		}
		work := q[0]
		q[0] = nil
		l.queued[chat] = q[1:]
		l.mu.Unlock()
		work()
	}
}

// wait blocks until every submitted work has returned. Nothing may be
// submitted while it waits.
func (l *chatLanes) wait() { l.wg.Wait() }

// chatOf returns the chat an update belongs to, 0 when it has none (such
// updates share one lane).
func chatOf(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		return u.CallbackQuery.Message.Message.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.InaccessibleMessage != nil:
		return u.CallbackQuery.Message.InaccessibleMessage.Chat.ID
	}
	return 0
}
