package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// maxFileBytes bounds file(): a run file reads prompts and keys, not datasets.
const maxFileBytes = 16 << 20

// FunctionDocs describes the functions a run file may call, for the docs.
var FunctionDocs = []struct{ Signature, Doc string }{
	{"env(name)", "The environment variable `name`, or `\"\"` when it is not set."},
	{"file(path)", "The contents of a UTF-8 text file (at most 16 MiB); a relative path is relative to the run file's directory."},
	{"abspath(path)", "`path` made absolute against the run file's directory."},
	{"basename(path)", "The last element of `path`."},
	{"dirname(path)", "`path` without its last element."},
	{"join(separator, list)", "The strings of `list` joined with `separator`."},
	{"format(spec, values...)", "printf-style formatting, e.g. `format(\"runs/%s-%d\", var.name, var.seed)`."},
	{"lower(s)", "`s` in lower case."},
	{"upper(s)", "`s` in upper case."},
	{"concat(lists...)", "The lists joined into one."},
	{"merge(maps...)", "The maps merged into one; later keys win."},
	{"coalesce(strings...)", "The first argument that is neither null nor empty, e.g. `coalesce(env(\"DATA\"), \"data\")`; an error when there is none."},
	{"tostring(v)", "`v` converted to a string."},
	{"tonumber(v)", "`v` converted to a number."},
}

// functions returns the run file's functions; dir is the run file's directory and env
// the environment env() reads.
func functions(dir string, env map[string]string) map[string]function.Function {
	resolve := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	stringFunc := func(param string, impl func(string) (string, error)) function.Function {
		return function.New(&function.Spec{
			Params: []function.Parameter{{Name: param, Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				s, err := impl(args[0].AsString())
				if err != nil {
					return cty.UnknownVal(cty.String), err
				}
				return cty.StringVal(s), nil
			},
		})
	}
	fns := map[string]function.Function{
		"env": stringFunc("name", func(name string) (string, error) { return env[name], nil }),
		"file": stringFunc("path", func(p string) (string, error) {
			full := resolve(p)
			info, err := os.Stat(full)
			if err != nil {
				return "", fmt.Errorf("cannot read %s: %w", full, err)
			}
			// Devices and pipes (/dev/zero, a FIFO) could block or never end.
			if !info.Mode().IsRegular() {
				return "", fmt.Errorf("%s is not a regular file", full)
			}
			if info.Size() > maxFileBytes {
				return "", fmt.Errorf("%s is %d bytes; file() reads at most %d", full, info.Size(), maxFileBytes)
			}
			fh, err := os.Open(full)
			if err != nil {
				return "", fmt.Errorf("cannot read %s: %w", full, err)
			}
			defer fh.Close()
			b, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
			if err != nil {
				return "", fmt.Errorf("cannot read %s: %w", full, err)
			}
			if len(b) > maxFileBytes {
				return "", fmt.Errorf("%s grew past %d bytes while being read", full, maxFileBytes)
			}
			if !utf8.Valid(b) {
				return "", fmt.Errorf("%s is not UTF-8 text", full)
			}
			return string(b), nil
		}),
		"abspath":  stringFunc("path", func(p string) (string, error) { return resolve(p), nil }),
		"basename": stringFunc("path", func(p string) (string, error) { return filepath.Base(p), nil }),
		"dirname":  stringFunc("path", func(p string) (string, error) { return filepath.Dir(p), nil }),
		"join":     boundedJoin,
		"format":   boundedFormat,
		"lower":    stdlib.LowerFunc,
		"upper":    stdlib.UpperFunc,
		"concat":   stdlib.ConcatFunc,
		"merge":    stdlib.MergeFunc,
		"coalesce": coalesceFunc,
		"tostring": stdlib.MakeToFunc(cty.String),
		"tonumber": stdlib.MakeToFunc(cty.Number),
	}
	return fns
}

// functionNames lists the functions, sorted (for tests and docs).
func functionNames() []string {
	var names []string
	for name := range functions("", nil) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// coalesceFunc returns its first non-empty string argument. cty's own coalesce returns
// the first non-null value, so an unset env() ("") would win; this is the behaviour run
// files want.
var coalesceFunc = function.New(&function.Spec{
	VarParam: &function.Parameter{Name: "strings", Type: cty.String, AllowNull: true},
	Type:     function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		for _, a := range args {
			if !a.IsNull() && a.AsString() != "" {
				return a, nil
			}
		}
		return cty.UnknownVal(cty.String), fmt.Errorf("no non-empty argument")
	},
})
