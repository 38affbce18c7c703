package llmtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

func TestSetModelsListsThemOrNone(t *testing.T) {
	s := NewServer()
	defer s.Close()
	list := func() (int, []string) {
		t.Helper()
		resp, err := http.Get(s.URL() + "/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		var ids []string
		for _, m := range body.Data {
			ids = append(ids, m.ID)
		}
		return resp.StatusCode, ids
	}
	if code, ids := list(); code != http.StatusOK || !slices.Equal(ids, []string{"llmtest"}) {
		t.Fatalf("default: HTTP %d %q", code, ids)
	}
	s.SetModels("gpt-4o", "gpt-4o-mini")
	if code, ids := list(); code != http.StatusOK || !slices.Equal(ids, []string{"gpt-4o", "gpt-4o-mini"}) {
		t.Fatalf("after SetModels: HTTP %d %q", code, ids)
	}
	s.SetModels()
	if code, _ := list(); code != http.StatusNotFound {
		t.Fatalf("no models: HTTP %d, want 404", code)
	}
}
