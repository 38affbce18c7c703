package agentcore

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

func TestSchemaCacheConvertsEachSchemaOnce(t *testing.T) {
	var c schemaCache
	calls := map[string]int{}
	convert := func(raw json.RawMessage) (json.RawMessage, error) {
		calls[string(raw)]++
		if string(raw) == "bad" {
			return nil, errors.New("bad schema")
		}
		return json.RawMessage("wire:" + string(raw)), nil
	}
	for range 3 {
		for _, raw := range []string{`{"a":1}`, `{"b":2}`} {
			got, err := c.get(json.RawMessage(raw), convert)
			if err != nil || string(got) != "wire:"+raw {
				t.Fatalf("get(%s) = %s, %v", raw, got, err)
			}
		}
		if _, err := c.get(json.RawMessage("bad"), convert); err == nil {
			t.Fatal("a bad schema was accepted")
		}
	}
	if calls[`{"a":1}`] != 1 || calls[`{"b":2}`] != 1 {
		t.Errorf("convert calls = %v, want one per good schema", calls)
	}
	if calls["bad"] != 3 {
		t.Errorf("a bad schema was converted %d times, want every time (failures are not kept)", calls["bad"])
	}
}

func TestSchemaCacheStartsOverWhenFull(t *testing.T) {
	var c schemaCache
	convert := func(raw json.RawMessage) (json.RawMessage, error) { return raw, nil }
	for i := range maxCachedSchemas + 10 {
		if _, err := c.get(json.RawMessage(`{"i":`+strconv.Itoa(i)+`}`), convert); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > maxCachedSchemas {
		t.Errorf("cache holds %d schemas, want at most %d", n, maxCachedSchemas)
	}
}
