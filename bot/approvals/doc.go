// Package approvals asks people to decide the risky tool calls an agent
// wants to make. A call that needs a decision parks its run; approvers
// decide with buttons in the chat (or the admin API) on any replica, and
// the decision resumes the run. It owns the approval records and their
// store interface, the approval buttons, /approvals and /cancel, and the
// expiry of requests nobody decides.
package approvals
