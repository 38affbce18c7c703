package config

import (
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		count   int
		per     time.Duration
		off     bool
		wantErr bool
	}{
		{in: "20/m", count: 20, per: time.Minute},
		{in: "1/s", count: 1, per: time.Second},
		{in: "100/h", count: 100, per: time.Hour},
		{in: " 5 / M ", count: 5, per: time.Minute},
		{in: "off", off: true},
		{in: "OFF", off: true},
		{in: "0/m", wantErr: true},
		{in: "-1/m", wantErr: true},
		{in: "20/d", wantErr: true},
		{in: "20", wantErr: true},
		{in: "20 per minute", wantErr: true},
		{in: "x/m", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		count, per, off, err := ParseRate(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRate(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if count != tt.count || per != tt.per || off != tt.off {
			t.Errorf("ParseRate(%q) = %d, %s, %v; want %d, %s, %v", tt.in, count, per, off, tt.count, tt.per, tt.off)
		}
	}
}
