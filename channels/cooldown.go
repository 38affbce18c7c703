package channels

import (
	"sync"
	"time"
)

// Cooldowns remembers, per chat, until when the platform asked the bot not
// to send there: the end of the chat's latest 429. Telegram's flood
// control is per chat, and a call made before its retry_after has passed
// extends the ban, whichever part of the daemon makes it (a reply, a
// progress note, a typing indicator, an edit). The zero value is ready to
// use; it is safe for concurrent use.
type Cooldowns struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// cooldownSweep is how many chats may be remembered before ended
// cooldowns are forgotten, so the map stays as small as the set of chats
// limited right now.
const cooldownSweep = 1024

// Left returns how long chat must still wait (0: it may be sent to). An
// empty chat, a call to no chat in particular, never waits.
func (c *Cooldowns) Left(chat string) time.Duration {
	if c == nil || chat == "" {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	left := time.Until(c.until[chat])
	if left <= 0 {
		delete(c.until, chat)
		return 0
	}
	return left
}

// Limit records that the platform just answered chat with a 429 asking to
// wait after: the chat's cooldown ends then, or later if an earlier answer
// said so.
func (c *Cooldowns) Limit(chat string, after time.Duration) {
	if c == nil || chat == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until == nil {
		c.until = map[string]time.Time{}
	}
	now := time.Now()
	if len(c.until) >= cooldownSweep {
		for k, t := range c.until {
			if !t.After(now) {
				delete(c.until, k)
			}
		}
	}
	if end := now.Add(after); end.After(c.until[chat]) {
		c.until[chat] = end
	}
}
