package agentcore

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
)

// UnknownModel reports whether the server said it does not have the model
// asked for: HTTP 404 (what OpenAI, Anthropic and Ollama answer, and what a
// wrong endpoint gets too: both are fixed in the config), OpenAI's
// "model_not_found" code, or a message saying the model is not found or
// does not exist (Ollama: `model "x" not found`; Anthropic:
// `not_found_error` "model: x"; compatible servers answering 400). Trying
// again cannot help; an admin must change the config.
func (e *ProviderError) UnknownModel() bool {
	if e.Status == http.StatusNotFound || e.Code == "model_not_found" {
		return true
	}
	return e.Status/100 == 4 && e.Err != nil && unknownModelText.MatchString(e.Err.Error())
}

// unknownModelText is how servers word "no such model" in their messages.
var unknownModelText = regexp.MustCompile(`(?i)\bmodel\b.{0,200}\b(not found|does not exist|not exist|no such model|unknown)\b|\b(unknown|invalid) model\b`)

// errorCode is the code of an error answer (error.code), else its type
// (error.type: Anthropic's "not_found_error"), or "".
func errorCode(raw []byte) string {
	var body struct {
		Error struct {
			Code json.RawMessage `json:"code"`
			Type string          `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return ""
	}
	var code string
	if json.Unmarshal(body.Error.Code, &code) == nil && code != "" {
		return code
	}
	return body.Error.Type
}

// withModel records in err, when it is a *ProviderError that does not name
// its model yet, the model the call asked for.
func withModel(err error, model string) error {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.Model == "" {
		pe.Model = model
	}
	return err
}
