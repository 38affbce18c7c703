package config

import (
	"reflect"
	"strings"
)

// envPrefix starts every environment variable that sets a key.
const envPrefix = "SWITCHBOARD_"

// field is one configuration key, found from Config's struct tags.
type field struct {
	key    string // dotted path, e.g. "llm.api_key"
	index  []int  // reflect field index path into Config
	list   bool   // []string: comma-separated in env
	secret bool
	// fileOnly keys (lists of records, like jobs, and maps) come only
	// from the file.
	fileOnly bool
	// isMap keys hold a map: any key below them is the map's.
	isMap bool
}

// env returns the environment variable that sets f.
func (f field) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(f.key, ".", "_"))
}

// value returns f's value in c.
func (f field) value(c *Config) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(f.index).Interface()
}

// fields lists every key of Config in declaration order.
func fields() []field {
	var out []field
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			name := sf.Tag.Get("mapstructure")
			if name == "" || name == "-" {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			if sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, prefix+name+".", idx)
				continue
			}
			// Lists of records and maps come only from the file.
			records := sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct ||
				sf.Type.Kind() == reflect.Map
			out = append(out, field{
				key:      prefix + name,
				index:    idx,
				list:     sf.Type.Kind() == reflect.Slice && !records,
				secret:   sf.Tag.Get("secret") == "true",
				fileOnly: records,
				isMap:    sf.Type.Kind() == reflect.Map,
			})
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return out
}

// Keys returns every configuration key, dotted ("llm.api_key"), in the
// order Config declares them.
func Keys() []string {
	fs := fields()
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	return keys
}
