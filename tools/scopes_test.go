package tools

import "testing"

func TestScopes(t *testing.T) {
	team := "dev/" + TeamScope("eng", "telegram:42")
	sub := "dev/" + SubScope("ab12", team)
	subsub := "dev/" + SubScope("cd34", sub)
	cases := []struct {
		session, origin string
		depth           int
	}{
		{"lead/telegram:42", "telegram:42", 0},
		{"lead/slack:C1:1700.1", "slack:C1:1700.1", 0},
		{team, "telegram:42", 0},
		{sub, "telegram:42", 1},
		{subsub, "telegram:42", 2},
		{"lead/job:daily", "job:daily", 0},
	}
	for _, c := range cases {
		if got := OriginOf(c.session); got != c.origin {
			t.Errorf("OriginOf(%q) = %q, want %q", c.session, got, c.origin)
		}
		if got := SubDepth(c.session); got != c.depth {
			t.Errorf("SubDepth(%q) = %d, want %d", c.session, got, c.depth)
		}
	}
	if tm, origin, ok := ParseTeamScope(ScopeOf(team)); !ok || tm != "eng" || origin != "telegram:42" {
		t.Errorf("ParseTeamScope = %q %q %v", tm, origin, ok)
	}
	if id, parent, ok := ParseSubScope(ScopeOf(sub)); !ok || id != "ab12" || parent != team {
		t.Errorf("ParseSubScope = %q %q %v", id, parent, ok)
	}
	for _, bad := range []string{"telegram:42", "team:", "team:eng", "sub:x", "sub:x:nosession", "sub::a/b"} {
		if _, _, ok := ParseSubScope(bad); ok && bad != "" {
			t.Errorf("ParseSubScope(%q) accepted", bad)
		}
	}
	if _, _, ok := ParseTeamScope("team:eng"); ok {
		t.Error("ParseTeamScope accepted a scope without origin")
	}
}
