// Package media receives the attachments people send: it downloads each one
// with a hard size cap, types it from its bytes, stores it durably and
// content-addressed (the same file twice is kept once, and any replica can
// read it back), and puts it in the conversation's workspace as
// inbox/<safe name> for the tools to work on.
package media
