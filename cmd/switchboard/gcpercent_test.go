package main

import "testing"

func TestGCPercentIsTwoHundredUnlessGOGCIsSet(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		want   int
		wantOK bool
	}{
		{env: nil, want: defaultGCPercent, wantOK: true},
		{env: map[string]string{"GOGC": "100"}, wantOK: false},
		{env: map[string]string{"GOGC": "off"}, wantOK: false},
		{env: map[string]string{"GOMEMLIMIT": "64MiB"}, want: defaultGCPercent, wantOK: true},
	} {
		got, ok := gcPercent(func(k string) string { return tc.env[k] })
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("env %v: gcPercent = %d, %v; want %d, %v", tc.env, got, ok, tc.want, tc.wantOK)
		}
	}
}
