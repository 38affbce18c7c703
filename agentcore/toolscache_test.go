package agentcore

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

func TestToolsCacheEncodesEachListOnce(t *testing.T) {
	var c toolsCache
	calls := 0
	encode := func(specs []tools.Spec) (json.RawMessage, error) {
		calls++
		for _, s := range specs {
			if string(s.Parameters) == "bad" {
				return nil, errors.New("bad schema")
			}
		}
		b, _ := json.Marshal(specs)
		return b, nil
	}
	a := []tools.Spec{{Name: "a", Parameters: json.RawMessage(`{"x":1}`)}, {Name: "b", Description: "bee"}}
	for range 3 {
		if _, err := c.get(a, encode); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("one list encoded %d times, want once", calls)
	}
	a[0].Parameters[5] = '2' // the caller changes a schema in place: a new list
	got, err := c.get(a, encode)
	if err != nil || calls != 2 || !json.Valid(got) {
		t.Fatalf("after a schema changed: %s, %v, %d encodes; want a second encode", got, err, calls)
	}
	var back []tools.Spec
	if err := json.Unmarshal(got, &back); err != nil || string(back[0].Parameters) != `{"x":2}` {
		t.Errorf("encoded %s, want the changed schema", got)
	}
	bad := []tools.Spec{{Name: "a", Parameters: json.RawMessage("bad")}}
	for range 2 {
		if _, err := c.get(bad, encode); err == nil {
			t.Fatal("a bad list was accepted")
		}
	}
	if calls != 4 {
		t.Errorf("%d encodes, want the bad list encoded on every call (failures are not kept)", calls)
	}
	if got, err := c.get(nil, encode); got != nil || err != nil || calls != 4 {
		t.Errorf("no tools: %s, %v (%d encodes), want nothing", got, err, calls)
	}
}

func TestToolsCacheNeverHandsOutAnotherListsEntry(t *testing.T) {
	var c toolsCache
	mine := []tools.Spec{{Name: "exec", Parameters: json.RawMessage(`{"type":"object"}`)}}
	other := []tools.Spec{{Name: "read_file"}}
	if _, err := c.get(other, func([]tools.Spec) (json.RawMessage, error) { return json.RawMessage(`["other"]`), nil }); err != nil {
		t.Fatal(err)
	}
	// A hash collision: other's entry under mine's key.
	c.entries[hashSpecs(toolsSeed, mine)] = c.entries[hashSpecs(toolsSeed, other)]
	got, err := c.get(mine, func([]tools.Spec) (json.RawMessage, error) { return json.RawMessage(`["mine"]`), nil })
	if err != nil || string(got) != `["mine"]` {
		t.Errorf("got %s, %v; want mine encoded, not the entry made for another list", got, err)
	}
}

func TestToolsCacheStartsOverWhenFull(t *testing.T) {
	var c toolsCache
	encode := func(specs []tools.Spec) (json.RawMessage, error) { return json.RawMessage(`[]`), nil }
	for i := range maxCachedToolLists + 5 {
		if _, err := c.get([]tools.Spec{{Name: string(rune('a' + i%26)), Description: string(rune(i))}}, encode); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n > maxCachedToolLists {
		t.Errorf("cache holds %d lists, want at most %d", n, maxCachedToolLists)
	}
}

func TestEncodeWithTools(t *testing.T) {
	list := json.RawMessage(`[{"name":"a"}]`)
	for _, tt := range []struct {
		body any
		list json.RawMessage
		want map[string]any
	}{
		{map[string]any{"model": "m"}, list, map[string]any{"model": "m", "tools": []any{map[string]any{"name": "a"}}}},
		{struct{}{}, list, map[string]any{"tools": []any{map[string]any{"name": "a"}}}},
		{map[string]any{"model": "m"}, nil, map[string]any{"model": "m"}},
	} {
		b, err := encodeWithTools(tt.body, tt.list)
		var got map[string]any
		if err != nil || json.Unmarshal(b, &got) != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("encodeWithTools(%v, %s) = %s, %v; want %v", tt.body, tt.list, b, err, tt.want)
		}
	}
	if _, err := encodeWithTools([]int{1}, list); err == nil {
		t.Error("a body that is not an object was accepted")
	}
}
