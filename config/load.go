package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
)

// DefaultFile is read when LoadOptions.File is empty and it exists.
const DefaultFile = "switchboard.yaml"

// LoadOptions says where Load reads from.
type LoadOptions struct {
	// File is the YAML file to read. Empty: ./switchboard.yaml if it
	// exists, else no file.
	File string
	// Environ is the environment as KEY=VALUE pairs; nil means
	// os.Environ().
	Environ []string
}

// Load reads defaults, then the YAML file, then SWITCHBOARD_* variables
// (env wins over the file). It does not Validate.
//
// Unknown keys, values that do not fit their key's type and unreadable
// secret files are returned together as Problems, one per line. The Config
// is returned with them, each unusable value left at its default, so that
// the caller can Validate it too and report every problem in one run. A
// missing, unreadable or malformed file returns a nil Config: nothing in it
// could be checked.
func Load(opts LoadOptions) (*Config, error) {
	all := fields()
	v := viper.New()
	defaults := Defaults()
	for _, f := range all {
		v.SetDefault(f.key, f.value(&defaults))
	}

	file, err := resolveFile(opts.File)
	if err != nil {
		return nil, err
	}
	var p Problems
	if file != "" {
		unknown, err := readFile(v, file, all)
		if err != nil {
			return nil, err
		}
		p = append(p, unknown...)
	}

	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	fromFiles, fileProblems := applySecretFiles(v, environ, all)
	unknownEnv := slices.DeleteFunc(applyEnv(v, environ, all), func(name string) bool { return slices.Contains(fromFiles, name) })
	for _, fp := range fileProblems {
		p = append(p, "environment: "+fp)
	}

	var c Config
	if err := v.Unmarshal(&c, viper.DecodeHook(decodeHook())); err != nil {
		p = append(p, decodeProblems(err, &c, &defaults, all)...)
	}
	if len(c.Approvals.Approvers) == 0 {
		c.Approvals.Approvers = slices.Clone(c.Admins)
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err == nil {
			err = c.caseKeptMaps(data)
		}
		if err == nil {
			var priceProblems []string
			priceProblems, err = c.filePrices(data)
			p = append(p, priceProblems...)
		}
		if err != nil {
			p = append(p, fmt.Sprintf("config file %s: %v", file, err))
		}
	}
	c.File = file
	c.UnknownEnv = unknownEnv
	c.resolveMediaRetention(func(key string) bool { return setOutsideDefaults(v, environ, key) })
	if len(p) > 0 {
		return &c, p
	}
	return &c, nil
}

// decodeProblems turns mapstructure's error into "key: what is wrong" lines,
// one per bad value, and puts each bad key of c back to its default so that
// Validate does not report it a second time as, say, zero.
func decodeProblems(err error, c, defaults *Config, all []field) Problems {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return Problems{err.Error()}
	}
	byKey := map[string]field{}
	for _, f := range all {
		byKey[f.key] = f
	}
	var p Problems
	for _, e := range joined.Unwrap() {
		var de *mapstructure.DecodeError
		if !errors.As(e, &de) {
			p = append(p, e.Error())
			continue
		}
		p = append(p, de.Name()+": "+decodeMessage(de.Unwrap()))
		if f, ok := byKey[de.Name()]; ok {
			dst := reflect.ValueOf(c).Elem().FieldByIndex(f.index)
			dst.Set(reflect.ValueOf(defaults).Elem().FieldByIndex(f.index))
		}
	}
	return p
}

// decodeMessage says what is wrong with a value that does not fit its key's
// type in the words of the file, not of Go's types: `"many" is not a whole
// number`.
func decodeMessage(err error) string {
	var pe *mapstructure.ParseError
	var ue *mapstructure.UnconvertibleTypeError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("%q is not %s", fmt.Sprint(pe.Value), typeWords(pe.Expected.Type()))
	case errors.As(err, &ue):
		return fmt.Sprintf("%s is not %s", valueWords(ue.Value), typeWords(ue.Expected.Type()))
	}
	return err.Error()
}

// typeWords names what a value of t is written as in YAML or env.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number (e.g. 16)"
	case reflect.Float32, reflect.Float64:
		return "a number (e.g. 0.5)"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a single value (quote it if it holds a colon)"
	case reflect.Slice:
		return "a list (e.g. [a, b])"
	case reflect.Map, reflect.Struct:
		return "a section of keys"
	}
	return "a " + t.String()
}

// valueWords names the kind of a decoded YAML value.
func valueWords(v any) string {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map:
		return "a section of keys"
	case reflect.Slice:
		return "a list"
	case reflect.Bool:
		return "true/false"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

// resolveFile picks the file to read: the named one (which must exist) or
// ./switchboard.yaml when present.
func resolveFile(name string) (string, error) {
	if name == "" {
		if _, err := os.Stat(DefaultFile); err == nil {
			return DefaultFile, nil
		}
		return "", nil
	}
	if _, err := os.Stat(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("config file %s: no such file (check --config)", name)
		}
		return "", fmt.Errorf("config file %s: %w", name, err)
	}
	return name, nil
}

// readFile loads the YAML file into v and returns its unknown keys, one
// problem each (viper ignores them when decoding). The error is for a file
// that cannot be read or is not YAML.
func readFile(v *viper.Viper, file string, all []field) (Problems, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	// A separate viper sees only the file's keys, so the unknown-key check
	// is not muddled by defaults.
	only := viper.New()
	only.SetConfigType("yaml")
	if err := only.ReadConfig(bytes.NewReader(data)); err != nil {
		var pe viper.ConfigParseError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			err = pe.Unwrap()
		}
		return nil, fmt.Errorf("config file %s is not valid YAML: %w", file, err)
	}
	var p Problems
	for _, k := range unknownKeys(only.AllKeys(), all) {
		p = append(p, fmt.Sprintf("config file %s: unknown key %s", file, k))
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	return p, nil
}

// unknownKeys returns the keys (with a "did you mean" hint where one is
// close) that are neither a key nor a section of Config.
func unknownKeys(keys []string, all []field) []string {
	known := map[string]bool{}
	var candidates []string
	for _, f := range all {
		known[f.key] = true
		candidates = append(candidates, f.key)
		parts := strings.Split(f.key, ".")
		for i := 1; i < len(parts); i++ {
			known[strings.Join(parts[:i], ".")] = true
		}
	}
	var out []string
	for _, k := range keys {
		if known[k] || slices.ContainsFunc(all, func(f field) bool { return f.isMap && strings.HasPrefix(k, f.key+".") }) {
			continue
		}
		msg := k
		if s := suggest(k, candidates); s != "" {
			msg += " (did you mean " + s + "?)"
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// applyEnv sets every key that has a SWITCHBOARD_* variable in environ and
// returns the SWITCHBOARD_* variables that match no key. Empty values are
// ignored; list keys are comma-separated.
func applyEnv(v *viper.Viper, environ []string, all []field) []string {
	byEnv := map[string]field{}
	for _, f := range all {
		if !f.fileOnly {
			byEnv[f.env()] = f
		}
	}
	var unknown []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		f, ok := byEnv[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if val == "" {
			continue
		}
		if f.list {
			v.Set(f.key, splitList(val))
		} else {
			v.Set(f.key, val)
		}
	}
	sort.Strings(unknown)
	return unknown
}

// splitList splits a comma-separated list, trimming spaces and dropping
// empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// decodeHook converts file and env values into Config's field types.
func decodeHook() mapstructure.DecodeHookFunc {
	durationType := reflect.TypeFor[time.Duration]()
	return mapstructure.ComposeDecodeHookFunc(
		func(from, to reflect.Type, data any) (any, error) {
			if to.Kind() != reflect.Slice || to.Elem().Kind() != reflect.String {
				return data, nil
			}
			switch d := data.(type) {
			case string:
				return splitList(d), nil
			case []any:
				out := make([]string, 0, len(d))
				for _, item := range d {
					if s := strings.TrimSpace(fmt.Sprint(item)); s != "" {
						out = append(out, s)
					}
				}
				return out, nil
			}
			return data, nil
		},
		func(from, to reflect.Type, data any) (any, error) {
			if to != durationType {
				return data, nil
			}
			switch from.Kind() {
			case reflect.String:
				s := strings.TrimSpace(data.(string))
				d, err := parseDuration(s)
				if err != nil {
					return nil, fmt.Errorf("%q is not a duration: use a number with a unit, e.g. 90s, 2m or 30d", s)
				}
				return d, nil
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
				reflect.Float32, reflect.Float64:
				if from == durationType {
					return data, nil
				}
				// A bare 0 needs no unit: it is the same length in all of
				// them, and retention's keys say "keep" with it.
				if reflect.ValueOf(data).IsZero() {
					return time.Duration(0), nil
				}
				return nil, fmt.Errorf("%v has no unit: write a duration such as 90s, 2m or 30d", data)
			}
			return data, nil
		},
	)
}
