// Package audit answers /audit: the newest decisions of the audit log
// (approvals, access, model switches, resets, forgets…) — who, what, when
// and the outcome — for admins only. The log is written by the stores of
// the features that decide, in the transaction of each decision; this
// package only reads it.
package audit
