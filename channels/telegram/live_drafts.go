package telegram

import (
	"errors"
	"sync/atomic"

	"github.com/go-telegram/bot"
	lru "github.com/hashicorp/golang-lru/v2"
)

// maxRefusedChats bounds how many private chats are remembered as refusing
// drafts; past it the least recently used is forgotten (and tries a draft
// once more).
const maxRefusedChats = 1024

// draftSupport remembers where Telegram refused sendMessageDraft, so that
// live answers there go straight to an edited message: everywhere when the
// Bot API does not have the method (404, an older or local Bot API server),
// else per private chat. It is safe for concurrent use.
type draftSupport struct {
	absent  *atomic.Bool
	refused *lru.Cache[int64, struct{}]
}

func newDraftSupport() draftSupport {
	c, _ := lru.New[int64, struct{}](maxRefusedChats) // errs only for a size below 1
	return draftSupport{absent: new(atomic.Bool), refused: c}
}

// usable reports whether a live answer in chatID (a target chat id) may try
// a draft: drafts are for private chats, whose ids are positive.
func (d draftSupport) usable(chatID any) bool {
	id, ok := chatID.(int64)
	if !ok || id <= 0 || d.absent.Load() {
		return false
	}
	return !d.refused.Contains(id)
}

// refuse records that a draft in chatID failed with err (not a 429). Only
// Telegram's own refusals are remembered: a network error or a 5xx says
// nothing about drafts, and the next live answer tries one again.
func (d draftSupport) refuse(chatID int64, err error) {
	if errors.Is(err, bot.ErrorNotFound) {
		d.absent.Store(true)
		return
	}
	if errors.Is(err, bot.ErrorBadRequest) || errors.Is(err, bot.ErrorForbidden) {
		d.refused.Add(chatID, struct{}{})
	}
}
