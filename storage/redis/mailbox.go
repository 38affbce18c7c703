package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot/teams"
)

var _ teams.Mailbox = (*Store)(nil)

// mailReclaim: a message read but unconfirmed this long (its reader
// crashed) is delivered again.
var mailReclaim = 30 * time.Second

// Mailbox settings.
const (
	mailGroup  = "readers"
	mailMaxLen = 10000 // messages kept per inbox (approximate trim)

	mailReadTTL   = 24 * time.Hour // how long a read's result is kept for its repeat
	mailStreamKey = "team:%s:inbox:%s"
)

func (s *Store) inbox(team, member string) string {
	return s.prefix + fmt.Sprintf(mailStreamKey, team, member)
}

// ensureGroup creates the inbox's consumer group (and stream) if needed.
func (s *Store) ensureGroup(ctx context.Context, stream string) error {
	err := s.client.XGroupCreateMkStream(ctx, stream, mailGroup, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

// Send implements teams.Mailbox (XADD, trimmed to about 10 000 messages).
func (s *Store) Send(ctx context.Context, team string, m teams.MailMessage) (string, error) {
	stream := s.inbox(team, m.To)
	if err := s.ensureGroup(ctx, stream); err != nil {
		return "", fmt.Errorf("mailbox of %s: %w", m.To, err)
	}
	id, err := s.client.XAdd(ctx, &goredis.XAddArgs{Stream: stream, MaxLen: mailMaxLen, Approx: true,
		Values: map[string]any{"from": m.From, "text": m.Text, "origin": m.Origin, "at": time.Now().UnixMilli()}}).Result()
	if err != nil {
		return "", fmt.Errorf("send to %s: %w", m.To, err)
	}
	return id, nil
}

// Fetch returns up to max unread messages of member without confirming
// them: messages another reader took but never confirmed for 30 s (it
// crashed) first, then new ones. Confirm each with Ack once it is stored
// elsewhere; until then no other reader gets it, and after 30 s without
// an Ack any reader does.
func (s *Store) Fetch(ctx context.Context, team, member string, max int) ([]teams.MailMessage, error) {
	stream := s.inbox(team, member)
	if err := s.ensureGroup(ctx, stream); err != nil {
		return nil, fmt.Errorf("mailbox of %s: %w", member, err)
	}
	entries, err := s.takeMail(ctx, stream, max)
	if err != nil {
		return nil, err
	}
	return mailOf(member, entries), nil
}

// Ack confirms that member's messages ids are taken care of.
func (s *Store) Ack(ctx context.Context, team, member string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.client.XAck(ctx, s.inbox(team, member), mailGroup, ids...).Err(); err != nil {
		return fmt.Errorf("confirm mail of %s: %w", member, err)
	}
	return nil
}

// takeMail claims abandoned entries (XAUTOCLAIM), then reads new ones
// (XREADGROUP), up to max in all.
func (s *Store) takeMail(ctx context.Context, stream string, max int) ([]goredis.XMessage, error) {
	consumer := s.inst.id
	claimed, _, err := s.client.XAutoClaim(ctx, &goredis.XAutoClaimArgs{Stream: stream, Group: mailGroup,
		Consumer: consumer, MinIdle: mailReclaim, Start: "0-0", Count: int64(max)}).Result()
	if err != nil {
		return nil, fmt.Errorf("reclaim mailbox: %w", err)
	}
	entries := claimed
	if len(entries) < max {
		res, err := s.client.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: mailGroup, Consumer: consumer,
			Streams: []string{stream, ">"}, Count: int64(max - len(entries)), Block: -1}).Result()
		if err != nil && !errors.Is(err, goredis.Nil) {
			return nil, fmt.Errorf("read mailbox: %w", err)
		}
		for _, st := range res {
			entries = append(entries, st.Messages...)
		}
	}
	return entries, nil
}

// mailOf decodes stream entries of member's inbox.
func mailOf(member string, entries []goredis.XMessage) []teams.MailMessage {
	msgs := make([]teams.MailMessage, 0, len(entries))
	for _, e := range entries {
		m := teams.MailMessage{ID: e.ID, To: member}
		m.From, _ = e.Values["from"].(string)
		m.Text, _ = e.Values["text"].(string)
		m.Origin, _ = e.Values["origin"].(string)
		if ms, ok := e.Values["at"].(string); ok {
			var n int64
			fmt.Sscan(ms, &n)
			m.At = time.UnixMilli(n)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// Read implements teams.Mailbox. Messages another reader took but never
// confirmed for 30 s (it crashed) are claimed first (XAUTOCLAIM), then new
// ones are read (XREADGROUP). The batch is stored under readKey and
// acknowledged in one transaction, so a repeat of the same read returns
// the same batch and nothing is delivered twice or lost.
func (s *Store) Read(ctx context.Context, team, member, readKey string, max int) ([]teams.MailMessage, error) {
	doneKey := s.prefix + "mailread:" + readKey
	if raw, err := s.client.Get(ctx, doneKey).Result(); err == nil {
		var msgs []teams.MailMessage
		if json.Unmarshal([]byte(raw), &msgs) == nil {
			return msgs, nil
		}
	} else if !errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("read mailbox: %w", err)
	}
	msgs, err := s.Fetch(ctx, team, member, max)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(msgs))
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	batch, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	_, err = s.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, doneKey, batch, mailReadTTL)
		if len(ids) > 0 {
			p.XAck(ctx, s.inbox(team, member), mailGroup, ids...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("confirm mailbox read: %w", err)
	}
	return msgs, nil
}
