package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// AttachmentReceiver takes in the files sent with a message before the
// message is stored: bot/media's Receiver downloads each one into
// PostgreSQL and puts it in the conversation's workspace.
type AttachmentReceiver interface {
	// Receive receives atts, sent in chat (platform:chat_id), for the
	// conversation whose workspace directory is workspace. An error means nothing may be acknowledged:
	// the platform redelivers the message and it is received again. A
	// file that can never be received (too large) is no error: it gets a
	// line saying so, and Tell says what to tell the person.
	Receive(ctx context.Context, chat, workspace string, atts []channels.Attachment) (ReceivedAttachments, error)
}

// ReceivedAttachments is what the files of one message add to it.
type ReceivedAttachments struct {
	// Lines are what the model reads of the files, in their order
	// ("[attachment: inbox/x.png, image/png, 12 KB]", a transcript).
	Lines []string
	// Images are the pictures among them, by reference to the stored copy.
	Images []agentcore.Image
	// Tell are short messages to the person ("report.zip is larger than
	// the 20 MB limit; send a smaller file").
	Tell []string
}

// receive takes in the attachments of in for session. Without a receiver
// (media is off) or a workspace for the conversation, each file is only
// named, so that the model can say plainly that it did not get it.
func (r *Router) receive(ctx context.Context, session string, in channels.Inbound, log *slog.Logger) (ReceivedAttachments, error) {
	if len(in.Attachments) == 0 {
		return ReceivedAttachments{}, nil
	}
	if r.opts.Attachments == nil || r.opts.Workspace == nil {
		return notDownloaded(in.Attachments, "media is off"), nil
	}
	call := sessionCall(session, r.agentOfSession(session), in.Address(), in.Identity(), in.Direct)
	ws, err := r.opts.Workspace(call)
	if err != nil {
		// A workspace that cannot be made (no data_dir) does not come back
		// on a redelivery: the message goes on without its files.
		log.Warn("no workspace for the attachments; the message goes on without them", "session", session, "err", err)
		return notDownloaded(in.Attachments, "this conversation has no workspace"), nil
	}
	got, err := r.opts.Attachments.Receive(ctx, in.Platform+":"+in.ChatID, ws, in.Attachments)
	if err != nil {
		return ReceivedAttachments{}, err
	}
	for i, l := range got.Lines {
		got.Lines[i] = r.opts.Scrub(l) // a transcript is text like any other
	}
	return got, nil
}

// notDownloaded names each of atts as not downloaded, and why.
func notDownloaded(atts []channels.Attachment, why string) ReceivedAttachments {
	var out ReceivedAttachments
	for _, a := range atts {
		name := a.Name
		if name == "" {
			name = a.Kind
		}
		// Quoted: the name is the sender's and may hold anything.
		out.Lines = append(out.Lines, fmt.Sprintf("[attachment: %q (not downloaded: %s)]", name, why))
	}
	return out
}

// withAttachments is the stored text of a message: what the person wrote,
// then a line for each file.
func withAttachments(text string, lines []string) string {
	if len(lines) == 0 {
		return text
	}
	all := strings.Join(lines, "\n")
	if text == "" {
		return all
	}
	return text + "\n" + all
}

// sessionCall is the tool call of a run of session by agent for the person
// user in chat to: the run's own (runInput), so a workspace found from it
// before the run is the one the run's tools use.
func sessionCall(session, agent string, to channels.Address, user string, direct bool) tools.Call {
	peer := "group"
	if direct {
		peer = "direct"
	}
	return tools.Call{Channel: to.Platform, ChatID: to.ChatID, ThreadID: to.ThreadID,
		PeerKind: peer, UserID: user, Session: session, Agent: agent}
}
