package redis

import "testing"

func TestParseURLSizesBuffersForSmallCommands(t *testing.T) {
	o, err := parseURL("redis://127.0.0.1:6379/3")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "127.0.0.1:6379" || o.DB != 3 {
		t.Errorf("addr %q db %d, want 127.0.0.1:6379 and 3", o.Addr, o.DB)
	}
	for name, got := range map[string]int{
		"ReadBufferSize": o.ReadBufferSize, "WriteBufferSize": o.WriteBufferSize,
		"PipelineReadBufferSize": o.PipelineReadBufferSize, "PipelineWriteBufferSize": o.PipelineWriteBufferSize,
	} {
		if got != connBufferSize {
			t.Errorf("%s = %d, want %d", name, got, connBufferSize)
		}
	}
}
