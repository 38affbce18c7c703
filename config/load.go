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
// (env wins over the file). It rejects unknown keys in the file. It does not
// Validate.
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
	if file != "" {
		if err := readFile(v, file, all); err != nil {
			return nil, err
		}
	}

	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	fromFiles, fileProblems := applySecretFiles(v, environ, all)
	unknownEnv := slices.DeleteFunc(applyEnv(v, environ, all), func(name string) bool { return slices.Contains(fromFiles, name) })
	if len(fileProblems) > 0 {
		return nil, fmt.Errorf("environment: %w", fileProblems)
	}

	var c Config
	if err := v.Unmarshal(&c, viper.DecodeHook(decodeHook())); err != nil {
		where := "config"
		if file != "" {
			where = "config file " + file + " or environment"
		}
		return nil, fmt.Errorf("%s: %w", where, decodeProblems(err))
	}
	if len(c.Approvals.Approvers) == 0 {
		c.Approvals.Approvers = slices.Clone(c.Admins)
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err == nil {
			err = c.caseKeptMaps(data)
		}
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", file, err)
		}
	}
	c.File = file
	c.UnknownEnv = unknownEnv
	return &c, nil
}

// decodeProblems turns mapstructure's error into Problems, one
// "key: what is wrong" line per bad value.
func decodeProblems(err error) error {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return err
	}
	var p Problems
	for _, e := range joined.Unwrap() {
		var de *mapstructure.DecodeError
		if errors.As(e, &de) {
			p = append(p, de.Name()+": "+de.Unwrap().Error())
			continue
		}
		p = append(p, e.Error())
	}
	return p
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

// readFile loads the YAML file into v and rejects keys Config lacks.
func readFile(v *viper.Viper, file string, all []field) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
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
		return fmt.Errorf("config file %s is not valid YAML: %w", file, err)
	}
	if unknown := unknownKeys(only.AllKeys(), all); len(unknown) > 0 {
		return fmt.Errorf("config file %s: unknown %s: %s", file,
			plural(len(unknown), "key", "keys"), strings.Join(unknown, "; "))
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	return nil
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
				d, err := time.ParseDuration(s)
				if err != nil {
					return nil, fmt.Errorf("%q is not a duration: use a number with a unit, e.g. 90s or 2m", s)
				}
				return d, nil
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
				reflect.Float32, reflect.Float64:
				if from == durationType {
					return data, nil
				}
				return nil, fmt.Errorf("%v has no unit: write a duration such as 90s or 2m", data)
			}
			return data, nil
		},
	)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
