package agentcore

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A streamed chunk as OpenAI sends it: one token of content.
var tokenChunk = []byte(`{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_eb9dce56a8","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`)

// A chunk decoded in place of the stream's previous one must come out as
// encoding/json decodes it into a new value, whatever the server sends:
// the fast decoder is only a shortcut, and nothing of the previous chunk
// may stay.
func TestChunkDecodesAsEncodingJSONDecodes(t *testing.T) {
	var reused openAIChunk
	for _, data := range []string{
		string(tokenChunk),
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"exec","arguments":"{\"cmd\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}}`,
		// Fields the previous chunk had and this one lacks.
		`{"choices":[{"index":0,"delta":{"content":"a","tool_calls":[{"index":0,"id":"c"}]},"finish_reason":"stop"},{"index":1,"delta":{"content":"b"}}]}`,
		`{"choices":[{"index":0,"delta":{}}]}`,
		`{"choices":[{},{},{},{},{},{},{},{},{},{},{},{"index":0,"delta":{"content":"twelfth"}}]}`,
		`{"choices":[{"delta":{"refusal":"r"}}]}`,
		`{"error":{"message":"overloaded","code":529}}`,
		`{"error":null,"choices":[{"index":0,"delta":{"content":"\u00e9\ud83d\ude00 \"q\" \\ \n"}}]}`,
		`{"Choices":[{"INDEX":0,"Delta":{"Content":"case"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0,"delta":{"content":"b"}}]}`,
		// Fields of an unexpected type: encoding/json leaves them empty and
		// decodes the rest.
		`{"usage":"n/a","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
		`{"choices":[{"index":"0","delta":{"content":"ok"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":42,"refusal":"no"},"finish_reason":7}]}`,
		`{"choices":{"index":0},"usage":{"prompt_tokens":"many","completion_tokens":2}}`,
		`{"choices":[{"index":1.5,"delta":{"tool_calls":[{"index":-1,"id":7,"function":{"name":["x"]}}]}}]}`,
		`{"choices":[{"index":99999999999999999999,"delta":{"content":"big"}}]}`,
		// Not JSON, or not an object.
		`{"choices":[{"index":0,"delta":{"content":"cut`,
		`{"choices":[]} trailing`,
		`[1,2]`,
		`"text"`,
		`null`,
		``,
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\xfe\"}}]}",
	} {
		var std openAIChunk
		err := reused.decode([]byte(data))
		stdErr := json.Unmarshal([]byte(data), &std)
		if (err == nil) != (stdErr == nil) {
			t.Errorf("%s: decode error %v, encoding/json error %v", data, err, stdErr)
		}
		// No choices, or an empty list of them, read alike.
		got := reused
		if len(got.Choices) == 0 {
			got.Choices = nil
		}
		if len(std.Choices) == 0 {
			std.Choices = nil
		}
		if !reflect.DeepEqual(got, std) {
			t.Errorf("%s:\n decode        %+v\n encoding/json %+v", data, got, std)
		}
	}
}

// BenchmarkOpenAIStreamEvent is the daemon's work for one streamed token,
// in replies of 100 tokens.
func BenchmarkOpenAIStreamEvent(b *testing.B) {
	b.ReportAllocs()
	var a *openAIStream
	n := 0
	for b.Loop() {
		if n%100 == 0 {
			a = &openAIStream{}
		}
		n++
		if _, err := a.event(tokenChunk); err != nil {
			b.Fatal(err)
		}
	}
}
