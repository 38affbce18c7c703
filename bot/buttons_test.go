package bot

import (
	"strings"
	"testing"
)

// known stands for the kinds the features register: approvals' "ap",
// access requests' "ar" and grant requests' "gr".
func known(kind string) bool { return kind == "ap" || kind == "ar" || kind == "gr" }

func TestParseButton(t *testing.T) {
	id := NewID()
	cases := []struct {
		data string
		ok   bool
	}{
		{"ap:" + id + ":o", true},
		{"ar:" + id + ":a", true},
		{"ap:" + id + ":d", true},
		{"xx:" + id + ":o", false},  // unknown kind
		{"ap:" + id + ":", false},   // no choice
		{"ap:" + id + ":oo", false}, // long choice
		{"ap:" + strings.ToUpper(id) + ":o", false},
		{"ap:" + id[:19] + "1:o", false}, // 1 is not base32
		{"ap:" + id[:19] + ":o", false},  // short id
		{"ap:" + id + "x:o", false},      // long id
		{"ap:../../etc/passwd:o", false},
		{"ap:" + id + ":O", false},
		{"", false},
		{"ap::" + id + "o", false},
	}
	for _, c := range cases {
		kind, gotID, choice, ok := parseButton(c.data, known)
		if ok != c.ok {
			t.Errorf("parseButton(%q) ok = %v, want %v", c.data, ok, c.ok)
			continue
		}
		if ok && (kind+":"+gotID+":"+choice != c.data) {
			t.Errorf("parseButton(%q) = %q %q %q, does not round-trip", c.data, kind, gotID, choice)
		}
	}
}

func TestNewIDFitsTelegramButtonData(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if seen[id] {
			t.Fatalf("newID repeated %q", id)
		}
		seen[id] = true
		data := "ap:" + id + ":o"
		if len(data) > 64 {
			t.Fatalf("button data %q is %d bytes, Telegram allows 64", data, len(data))
		}
		if _, _, _, ok := parseButton(data, known); !ok {
			t.Fatalf("parseButton rejects our own data %q", data)
		}
	}
}

// FuzzParseButton: no input panics; whatever is accepted round-trips and
// has the exact shape the daemon produces.
func FuzzParseButton(f *testing.F) {
	for _, s := range []string{"ap:abcdefghijklmnopqrst:o", "ar:abcdefghijklmnopqrst:a", "ap::", "ap:%00:o", "ar:abcdefghijklmnopqrs\xff:a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		kind, id, choice, ok := parseButton(data, known)
		if !ok {
			return
		}
		if kind+":"+id+":"+choice != data {
			t.Fatalf("accepted %q but it does not round-trip", data)
		}
		if kind != "ap" && kind != "ar" {
			t.Fatalf("accepted unknown kind %q", kind)
		}
		if len(id) != idLen || len(choice) != 1 || len(data) > 64 {
			t.Fatalf("accepted malformed %q", data)
		}
	})
}
