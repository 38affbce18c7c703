package approvals

import "github.com/switchboard-chat/switchboard/tools"

// words are what an approval's buttons, cards and outcomes call allowing
// and denying: a tool call is allowed or denied, a skill published or
// rejected.
type words struct {
	allow, deny       string // the buttons
	allowed, denied   string // the outcome, "… by X"
	infinitive, thing string // "wants to <infinitive>", "this <thing>"
	refusal           string // what one refusing press does, for quorum cards
}

// wordsFor returns the words of approvals with verb (Approval.Verb).
func wordsFor(verb string) words {
	if verb == tools.VerbPublish {
		return words{allow: "Publish", deny: "Reject", allowed: "Published", denied: "Rejected", infinitive: "publish", thing: "skill",
			refusal: "one Reject rejects"}
	}
	return words{allow: "Allow once", deny: "Deny", allowed: "", denied: "", infinitive: "allow", thing: "",
		refusal: "one Deny denies"}
}
