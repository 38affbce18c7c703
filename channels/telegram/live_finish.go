package telegram

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/switchboard-chat/switchboard/channels"
)

// FinishLive implements channels.LiveAnswerer: msg, split and rendered as
// Send does it, is edited into the live messages msg.Replaces in order, the
// parts left over are sent as new messages (the last with the buttons), and
// live messages left over are deleted, or edited to "…" where Telegram
// will not delete them. Drafts in msg.Replaces are superseded by the
// messages sent. 429s are waited out as Send waits them out.
//
// It may be called again after it failed midway, or after it succeeded:
// the messages that took each part are remembered (for the latest
// answers, in memory), so a part is edited again, a no-op, rather than
// sent twice; a live message that is gone or can no longer be edited is
// replaced by a new message.
func (c *Channel) FinishLive(ctx context.Context, msg channels.Outbound) (string, error) {
	live, err := liveMessageIDs(msg)
	if err != nil {
		return "", err
	}
	if len(msg.Replaces) == 0 || msg.File != nil {
		return c.sendReplacing(ctx, msg, live)
	}
	fs, err := outgoingFor(msg)
	if err != nil {
		return "", err
	}
	parts, err := textParts(msg.To, msg.Text)
	if err != nil {
		return "", err
	}
	key := finishKey(msg)
	placed := c.finished.get(key)
	for i, part := range parts {
		into := 0
		switch {
		case i < len(placed):
			into = placed[i]
		case i < len(live):
			into = live[i]
		}
		id, err := c.placePart(ctx, fs, i, len(parts), part, into)
		if err != nil {
			return "", fmt.Errorf("telegram: finish live answer in %s: part %d of %d: %w", msg.To, i+1, len(parts), err)
		}
		if i < len(placed) {
			placed[i] = id
		} else {
			placed = append(placed, id)
		}
		c.finished.put(key, placed)
	}
	for _, id := range slices.Concat(live, placed[len(parts):]) {
		if slices.Contains(placed[:len(parts)], id) {
			continue
		}
		if err := c.removeLive(ctx, fs.chatID, id); err != nil {
			return "", fmt.Errorf("telegram: finish live answer in %s: %w", msg.To, err)
		}
	}
	return strconv.Itoa(placed[len(parts)-1]), nil
}

// sendReplacing delivers msg with Send (a file, or an answer with no live
// messages) and deletes the live messages it replaces.
func (c *Channel) sendReplacing(ctx context.Context, msg channels.Outbound, live []int) (string, error) {
	id, err := c.Send(ctx, msg)
	if err != nil {
		return "", err
	}
	chatID, _, _ := target(msg.To) // Send checked it
	for _, m := range live {
		if err := c.removeLive(ctx, chatID, m); err != nil {
			return "", fmt.Errorf("telegram: finish live answer in %s: %w", msg.To, err)
		}
	}
	return id, nil
}

// placePart puts part i of n into message into (0: none), editing it, or
// sends it as a new message when there is none or it cannot be edited any
// more. It returns the id of the message that shows the part.
func (c *Channel) placePart(ctx context.Context, fs outgoing, i, n int, part string, into int) (int, error) {
	if into != 0 {
		p := &bot.EditMessageTextParams{ChatID: fs.chatID, MessageID: into, Text: part, ParseMode: models.ParseModeHTML}
		if i == n-1 && fs.keyboard != nil {
			p.ReplyMarkup = fs.keyboard
		}
		err := c.editPart(ctx, p, c.retry)
		if err == nil {
			return into, nil
		}
		if !isUneditable(err) {
			return 0, c.classify(err)
		}
		c.log.Info("a live message is gone or can no longer be edited; sending its part as a new message",
			"message_id", into, "error", c.redact(err))
	}
	m, err := c.sendPart(ctx, fs.part(i, n, part), c.retry)
	if err != nil {
		return 0, err
	}
	return m.ID, nil
}

// removeLive deletes a live message the final text no longer needs; where
// Telegram refuses (a message too old to delete), it edits it to liveMark.
// Only a failure worth retrying (a 429 beyond what is waited out, a
// network error) is returned: the answer itself is delivered by then.
func (c *Channel) removeLive(ctx context.Context, chatID any, id int) error {
	err := c.retry(ctx, chatKey(chatID), func(ctx context.Context) error {
		_, err := c.bot.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: chatID, MessageID: id})
		return err
	})
	if err == nil || isGone(err) {
		return nil
	}
	if !refused(err) {
		return c.classify(err)
	}
	c.log.Warn("could not delete a left-over live message; marking it instead", "message_id", id, "error", c.redact(err))
	err = c.editPart(ctx, &bot.EditMessageTextParams{ChatID: chatID, MessageID: id, Text: liveMark}, c.retry)
	if err == nil || isUneditable(err) {
		return nil
	}
	if !refused(err) {
		return c.classify(err)
	}
	c.log.Warn("could not mark a left-over live message either", "message_id", id, "error", c.redact(err))
	return nil
}

// refused reports whether Telegram answered err with a refusal retrying
// cannot change (400, 403).
func refused(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) || errors.Is(err, bot.ErrorForbidden)
}

// isUneditable reports whether Telegram says the message to edit is gone
// or can no longer be edited.
func isUneditable(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) &&
		(strings.Contains(err.Error(), "message to edit not found") || strings.Contains(err.Error(), "message can't be edited"))
}

// liveMessageIDs returns the message ids among msg.Replaces, in order;
// drafts are not messages.
func liveMessageIDs(msg channels.Outbound) ([]int, error) {
	var ids []int
	for _, r := range msg.Replaces {
		if strings.HasPrefix(r, draftPrefix) {
			continue
		}
		id, err := strconv.Atoi(r)
		if err != nil {
			return nil, fmt.Errorf("telegram: finish live answer in %s: live message id %q is not a Telegram message id: %w",
				msg.To, r, channels.ErrPermanent)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// finishKey names one final answer: where it goes and what it replaces.
func finishKey(msg channels.Outbound) string {
	return msg.To.String() + "\x00" + msg.Key + "\x00" + strings.Join(msg.Replaces, "\x00")
}

// maxFinished bounds how many final answers' placements are remembered;
// past it the least recently used is forgotten.
const maxFinished = 512

// placements remembers, for the latest final answers, which message shows
// each part, so that FinishLive called again edits them rather than sending
// the parts twice. It is safe for concurrent use.
type placements struct{ ids *lru.Cache[string, []int] }

func newPlacements() placements {
	c, _ := lru.New[string, []int](maxFinished) // errs only for a size below 1
	return placements{ids: c}
}

// get returns the messages that show key's parts so far.
func (p placements) get(key string) []int {
	ids, _ := p.ids.Get(key)
	return slices.Clone(ids)
}

// put records the messages that show key's parts.
func (p placements) put(key string, ids []int) { p.ids.Add(key, slices.Clone(ids)) }
