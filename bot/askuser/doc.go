// Package askuser lets an agent ask the person it works for a question in
// the chat and wait for the answer (the ask_user tool). The question is
// posted with its options as buttons; the run parks, holding nothing, until
// the person who asked presses one or types an answer, on any replica and
// across restarts, and the answer is the result of the tool call when the
// run resumes. It owns the question records and their store interface,
// the tool, the buttons, the typed answers, withdrawal and expiry.
package askuser
