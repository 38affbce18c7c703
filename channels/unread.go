package channels

// WithUnreadMedia returns text with a line telling the model that what
// came with it (what: "a photo", "2 attachments") was not read, so the
// model answers the text and says so instead of pretending to have seen
// the file. Until media is read, every adapter marks it the same way.
func WithUnreadMedia(text, what string) string {
	return text + "\n\n[" + what + " sent with this message could not be read (only text is read for now): tell the person so.]"
}
