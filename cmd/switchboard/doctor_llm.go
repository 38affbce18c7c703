package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/config"
)

// maxModelMatches bounds the close matches a warning names.
const maxModelMatches = 5

// modelWarning says what to set when the model is empty, or "" when it is
// not: most servers refuse a request without one, so every message would
// fail only when it reaches the model.
func modelWarning(cfg *config.Config) string {
	if cfg.LLM.Model != "" {
		return ""
	}
	return "llm.model is not set: most model servers refuse requests without one, so every message would fail; " +
		"set llm.model (SWITCHBOARD_LLM_MODEL), e.g. to an id `switchboard doctor` lists"
}

// llmChecks are the checks of llm.* and of every agent whose own provider,
// URL, key or model sends it elsewhere.
func llmChecks(cfg *config.Config) []doctorCheck {
	checks := []doctorCheck{{name: "llm", run: func(ctx context.Context) (string, error) {
		return checkLLM(ctx, cfg.LLM, "llm.model")
	}}}
	for i, a := range cfg.Agents {
		l := cfg.LLMFor(a)
		if reflect.DeepEqual(l, cfg.LLM) {
			continue
		}
		l.Fallbacks = nil // the llm check checks them
		key := fmt.Sprintf("agents[%d].model", i)
		checks = append(checks, doctorCheck{name: "llm " + a.Name, run: func(ctx context.Context) (string, error) {
			return checkLLM(ctx, l, key)
		}})
	}
	for i, m := range cfg.Models {
		l := cfg.ModelLLM(m)
		l.Fallbacks = nil // the llm check checks them
		key := fmt.Sprintf("models[%d].model", i)
		checks = append(checks, doctorCheck{name: "model " + m.Name, run: func(ctx context.Context) (string, error) {
			return checkLLM(ctx, l, key)
		}})
	}
	return checks
}

// checkLLM asks the provider for its model list: it proves the URL, the key
// and the network in one request without spending tokens, and says whether
// the server knows the model (key names the setting that chose it). A
// server without a list (404) is asked nothing more.
func checkLLM(ctx context.Context, l config.LLM, key string) (string, error) {
	base, ids, listed, err := listModels(ctx, l)
	if err != nil {
		return "", err
	}
	reached := fmt.Sprintf("%s reachable (%s)", base, cmp.Or(l.Provider, "openai"))
	detail, err := checkModel(l, key, reached, ids, listed)
	if len(l.Fallbacks) == 0 {
		return detail, err
	}
	note, missing := checkFallbacks(l.Fallbacks, ids, listed)
	switch {
	case err != nil:
		return "", doctorWarning(err.Error() + "; " + note)
	case missing:
		return "", doctorWarning(detail + "; " + note)
	}
	return detail + "; " + note, nil
}

// checkFallbacks says whether the server lists each of llm.fallbacks,
// from the same list as the model; missing is true when one is not in it.
func checkFallbacks(fallbacks, ids []string, listed bool) (note string, missing bool) {
	if !listed {
		return "fallbacks " + strings.Join(fallbacks, ", ") + " (not checked)", false
	}
	var notes []string
	for _, m := range fallbacks {
		if hasModel(ids, m) {
			continue
		}
		n := fmt.Sprintf("llm.fallbacks %q is not in its list of models", m)
		if c := closeModels(m, ids); len(c) > 0 {
			n += " (did you mean " + strings.Join(c, ", ") + "?)"
		}
		notes = append(notes, n)
	}
	if len(notes) == 0 {
		return "fallbacks " + strings.Join(fallbacks, ", ") + " listed", false
	}
	return strings.Join(notes, "; "), true
}

// checkModel says whether the server, reached as reached says, lists
// l.Model (ids, when listed).
func checkModel(l config.LLM, key, reached string, ids []string, listed bool) (string, error) {
	switch {
	case l.Model == "":
		return "", doctorWarning(reached + ", but " + key + " is not set: most model servers refuse requests without one; set it" +
			listHint(ids))
	case !listed:
		return reached + ", model " + l.Model + " (the server lists no models to check it against)", nil
	case hasModel(ids, l.Model):
		return reached + ", model " + l.Model + " listed", nil
	}
	msg := fmt.Sprintf("%s, but %s %q is not in its list of models (%d)", reached, key, l.Model, len(ids))
	if m := closeModels(l.Model, ids); len(m) > 0 {
		msg += "; did you mean " + strings.Join(m, ", ") + "?"
	} else {
		msg += listHint(ids)
	}
	return "", doctorWarning(msg)
}

// listModels gets the provider's model ids. listed is false when the server
// has no model list (404); other failures say what to check.
func listModels(ctx context.Context, l config.LLM) (base string, ids []string, listed bool, err error) {
	base = strings.TrimRight(l.BaseURL, "/")
	path := "/models"
	header := http.Header{}
	switch l.Provider {
	case "anthropic":
		base = cmp.Or(base, "https://api.anthropic.com")
		// Anthropic pages the list, 20 to a page unless asked for more.
		path = "/v1/models?limit=1000"
		header.Set("x-api-key", l.APIKey)
		header.Set("anthropic-version", "2023-06-01")
	default:
		base = cmp.Or(base, "https://api.openai.com/v1")
		if l.APIKey != "" {
			header.Set("Authorization", "Bearer "+l.APIKey)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return base, nil, false, fmt.Errorf("llm.base_url %q: %w", base, err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return base, nil, false, fmt.Errorf("cannot reach %s: %w (check llm.base_url and the network)", base, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return base, nil, false, fmt.Errorf("%s refused the API key (HTTP %d): set llm.api_key", base, resp.StatusCode)
	case resp.StatusCode == http.StatusNotFound:
		return base, nil, false, nil
	case resp.StatusCode >= 400:
		return base, nil, false, fmt.Errorf("%s answered HTTP %d to GET models (check llm.base_url)", base, resp.StatusCode)
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&body); err != nil || len(body.Data) == 0 {
		// Not a model list after all: nothing to compare the model with.
		return base, nil, false, nil
	}
	for _, m := range body.Data {
		ids = append(ids, m.ID)
	}
	return base, ids, true, nil
}

// hasModel reports whether ids hold model. Ollama lists "name:latest" and
// takes "name" for it.
func hasModel(ids []string, model string) bool {
	return slices.Contains(ids, model) || slices.Contains(ids, model+":latest")
}

// closeModels returns up to maxModelMatches ids that look like what model
// meant: the one config.Suggest finds within a typo's distance first, then
// those containing it or contained in it, ignoring case. A name of three
// characters or fewer is within a typo's distance of any other short one,
// so it gets only the substring matches.
func closeModels(model string, ids []string) []string {
	var out []string
	if s := config.Suggest(model, ids); s != "" && len(model) > 3 {
		out = append(out, s)
	}
	lm := strings.ToLower(model)
	for _, id := range ids {
		li := strings.ToLower(id)
		if len(out) < maxModelMatches && !slices.Contains(out, id) && (strings.Contains(li, lm) || strings.Contains(lm, li)) {
			out = append(out, id)
		}
	}
	return out
}

// listHint names a few of the listed ids, or nothing without a list.
func listHint(ids []string) string {
	switch {
	case len(ids) == 0:
		return ""
	case len(ids) > maxModelMatches:
		return fmt.Sprintf(" (the server lists %s and %d more)", strings.Join(ids[:maxModelMatches], ", "), len(ids)-maxModelMatches)
	}
	return " (the server lists " + strings.Join(ids, ", ") + ")"
}
