package slack

import (
	"context"
	"strings"
	"time"
)

const (
	nameTTL        = time.Hour       // how long a looked-up name is trusted
	nameFailureTTL = time.Minute     // how long a failed lookup is not retried
	maxNames       = 10000           // cache entries before it starts over
	nameTimeout    = 5 * time.Second // bound on one users.info call
)

// cachedName is a display name looked up with users.info.
type cachedName struct {
	name    string
	expires time.Time
}

// userName returns the display name of user id: the profile's display
// name, else the real name, else the user name, else the id itself (also
// when users.info fails). Names are cached; they are for people to read,
// never for decisions.
func (c *Channel) userName(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	now := time.Now()
	c.mu.Lock()
	cached, ok := c.users[id]
	c.mu.Unlock()
	if ok && now.Before(cached.expires) {
		return cached.name
	}
	ctx, cancel := context.WithTimeout(ctx, nameTimeout)
	defer cancel()
	name, ttl := id, nameFailureTTL
	u, err := c.api.GetUserInfoContext(ctx, id)
	if err != nil {
		c.log.Debug("slack users.info failed; showing the user id", "user_id", id, "error", c.redact(err))
	} else {
		name = firstOf(strings.TrimSpace(u.Profile.DisplayName), strings.TrimSpace(u.Profile.RealName),
			strings.TrimSpace(u.RealName), strings.TrimSpace(u.Name), id)
		ttl = nameTTL
	}
	c.mu.Lock()
	if len(c.users) >= maxNames {
		clear(c.users)
	}
	c.users[id] = cachedName{name: name, expires: now.Add(ttl)}
	c.mu.Unlock()
	return name
}
