package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestValidateModels(t *testing.T) {
	c := Defaults()
	c.Models = []ModelEntry{{Name: "a", Model: "m1"}, {Name: "a", Model: "m2"}, {Name: "", Model: "m3"},
		{Name: "default", Model: "m4"}, {Name: "b"}, {Name: "c", Model: "m5", Provider: "gemini"}}
	var got []string
	c.validateModels(func(f string, args ...any) { got = append(got, f) })
	all := strings.Join(got, "\n")
	for _, want := range []string{"used twice", "needs a name", "name default is taken", "needs a model", "provider must be openai or anthropic"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	c.Models = []ModelEntry{{Name: "a", Model: "m1", Provider: "anthropic"}, {Name: "b", Model: "m2"}}
	got = nil
	c.validateModels(func(f string, args ...any) { got = append(got, f) })
	if len(got) != 0 {
		t.Errorf("valid models refused: %v", got)
	}
}

// TestModelLLM: an entry takes llm's server, key and fallbacks unless it
// names its own server.
func TestModelLLM(t *testing.T) {
	c := Defaults()
	c.LLM.BaseURL, c.LLM.APIKey, c.LLM.Model, c.LLM.Fallbacks = "http://llm", "k", "main", []string{"fb", "big"}
	l := c.ModelLLM(ModelEntry{Name: "x", Model: "big", Vision: true})
	if l.BaseURL != "http://llm" || l.APIKey != "k" || l.Model != "big" || !l.Vision || len(l.Fallbacks) != 1 || l.Fallbacks[0] != "fb" {
		t.Errorf("same server: %+v", l)
	}
	l = c.ModelLLM(ModelEntry{Name: "y", Model: "claude", Provider: "anthropic", BaseURL: "http://other", APIKey: "k2"})
	if l.Provider != "anthropic" || l.BaseURL != "http://other" || l.APIKey != "k2" || len(l.Fallbacks) != 0 {
		t.Errorf("other server: %+v", l)
	}
}

func TestModelsAPIKeyIsASecret(t *testing.T) {
	c := Defaults()
	c.Models = []ModelEntry{{Name: "x", Model: "m", APIKey: "sk-entry-key"}}
	found := false
	for _, s := range c.Secrets() {
		found = found || s == "sk-entry-key"
	}
	if !found {
		t.Error("a models entry's api_key is not among Secrets")
	}
	for k, v := range c.Redacted() {
		if strings.Contains(fmt.Sprint(v), "sk-entry-key") {
			t.Errorf("Redacted shows the entry's key: %s = %s", k, v)
		}
	}
}
