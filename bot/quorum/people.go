package quorum

import (
	"errors"
	"slices"
)

// ErrNotApprover refuses a press by someone the request's rule does not
// let vote.
var ErrNotApprover = errors.New("you may not decide this")

// ErrOwnRequest refuses the requester's own vote (matched as a person,
// whichever of their accounts pressed) when the rule does not let it count.
var ErrOwnRequest = errors.New("you asked for this; another approver must decide")

// People maps identities (platform:user_id) to the person they belong to
// (approvals.people), so that one person with accounts on several
// platforms votes once; an identity not listed is a person of its own.
type People map[string]string

// PersonOf is the person identity belongs to, or the identity itself.
func (p People) PersonOf(identity string) string {
	if name, ok := p[identity]; ok {
		return "person:" + name
	}
	return identity
}

// Ballot is who may vote on one request.
type Ballot struct {
	// Voters may vote (identities).
	Voters []string
	// Requester is who asked; "" when nobody did (a scheduled job).
	Requester string
	// SelfApprove lets the requester's own vote count.
	SelfApprove bool
}

// Admit checks identity's vote on b: ErrNotApprover when press is true
// (a button, not a trusted caller such as the admin API) and identity is
// not one of b's voters; ErrOwnRequest when identity is the requester, or
// another account of the same person, and the rule does not let that count.
func (p People) Admit(b Ballot, identity string, press bool) error {
	if press && !slices.Contains(b.Voters, identity) {
		return ErrNotApprover
	}
	if !b.SelfApprove && b.Requester != "" && p.PersonOf(identity) == p.PersonOf(b.Requester) {
		return ErrOwnRequest
	}
	return nil
}
