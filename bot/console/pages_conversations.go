package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Page sizes of the Conversations pages.
const (
	conversationsShown = 100
	messagesShown      = 100
)

// conversationsData is what the list of conversations shows.
type conversationsData struct {
	Search string
	List   []Conversation
}

// conversationData is what one conversation shows.
type conversationData struct {
	Conversation string
	Messages     []ConversationMessage
	Approvals    []SessionApproval
	Older        string // the previous page's address, "" at the start
}

func (c *Console) conversationsPage(w http.ResponseWriter, r *http.Request) {
	d := conversationsData{Search: strings.TrimSpace(r.URL.Query().Get("q"))}
	p := page{Title: "Conversations", Nav: "conversations", Session: current(r)}
	var err error
	if d.List, err = c.o.Store.Conversations(r.Context(), d.Search, conversationsShown); err != nil {
		c.log.Error("console: list conversations", "err", err)
		p.Error = "Could not list the conversations (storage unavailable); reload in a moment."
	}
	p.Data = d
	c.render(w, r, http.StatusOK, "conversations", p)
}

func (c *Console) conversationPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := conversationData{Conversation: q.Get("key")}
	p := page{Title: "Conversation", Nav: "conversations", Session: current(r)}
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	msgs, err := c.o.Store.ConversationMessages(r.Context(), d.Conversation, max(before, 0), messagesShown+1)
	if err == nil && before <= 0 {
		d.Approvals, err = c.o.Store.SessionApprovals(r.Context(), d.Conversation)
	}
	if err != nil {
		c.log.Error("console: read conversation", "err", err)
		p.Error = "Could not read the conversation (storage unavailable); reload in a moment."
	}
	if len(msgs) > messagesShown {
		msgs = msgs[1:]
		d.Older = "/admin/conversations/view?" + url.Values{"key": {d.Conversation},
			"before": {strconv.FormatInt(msgs[0].Seq, 10)}}.Encode()
	}
	d.Messages = msgs
	if err == nil && len(msgs) == 0 && before <= 0 {
		p.Error = "No messages in this conversation (or no such conversation); the list of conversations has them."
	}
	p.Data = d
	c.render(w, r, http.StatusOK, "conversation", p)
}
