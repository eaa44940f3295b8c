package pluginhost

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// Lock is a lock file: what each plugin resolved to when it was pinned, like
// Terraform's .terraform.lock.hcl.
//
//	plugin "moshi" {
//	  version = "0.3.1"
//	  command = ["bash", "run.sh"]
//	  hashes  = ["h1:Zm9v..."]
//	}
//
// The API, for the `duplexmpe lock` and `plugins` commands:
//
//	lock, err := ReadLock(path)             // errors.Is(err, fs.ErrNotExist) when absent
//	hash, err := SpecHash(spec)             // "sha256:..." (source) or "h1:..." (command + dir)
//	err = lock.Check(spec, hash)            // nil when spec matches its entry
//	lock.Set(LockedPlugin{Name: ..., Hashes: []string{hash}, ...})
//	err = lock.Write(path)                  // atomic; blocks sorted by name
//
// A run refuses a plugin when Check fails; the error is a *PinError saying what differs.
type Lock struct {
	Plugins []LockedPlugin
	path    string // where it was read from, for messages
}

// LockedPlugin is one plugin block of the lock file.
type LockedPlugin struct {
	Name    string
	Version string   // optional: the version the plugin described when pinned
	Source  string   // exactly one of Source and Command
	Command []string //
	Hashes  []string // one or more "sha256:<hex>" or "h1:<base64>"
	// Files, for a command plugin, are the files its dir hashed to when it was pinned:
	// path to hex SHA-256 (HashDirFiles), so that a refusal names the files that
	// changed (Changed). Lock files written before have none.
	Files map[string]string
}

// SpecHash hashes what pins spec: the Source binary (HashFile) or, for a Command
// plugin, its Dir less HashSkip (HashDir). A Command plugin without Dir cannot be pinned.
func SpecHash(spec Spec) (string, error) {
	switch {
	case spec.Source != "":
		return HashFile(spec.resolve(spec.Source))
	case len(spec.Command) > 0 && spec.Dir != "":
		return HashDir(spec.Dir, spec.HashSkip...)
	case len(spec.Command) > 0:
		return "", fmt.Errorf("plugin %q: a command plugin is pinned by the hash of its dir; set dir", spec.Name)
	}
	return "", fmt.Errorf("plugin %q: nothing to hash (no source, no command)", spec.Name)
}

// ReadLock reads and checks a lock file. Bad content is an error with file:line.
func ReadLock(path string) (*Lock, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	l, err := ParseLock(src, path)
	if err != nil {
		return nil, err
	}
	return l, nil
}

var lockSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "plugin", LabelNames: []string{"name"}}}}

var pluginSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "version"}, {Name: "source"}, {Name: "command"}, {Name: "hashes", Required: true}, {Name: "files"},
}}

// ParseLock parses lock file content; filename names it in errors.
func ParseLock(src []byte, filename string) (*Lock, error) {
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, lockError(diags)
	}
	content, diags := file.Body.Content(lockSchema)
	if diags.HasErrors() {
		return nil, lockError(diags)
	}
	l := &Lock{path: filename}
	seen := map[string]hcl.Range{}
	for _, block := range content.Blocks {
		name := block.Labels[0]
		if prev, dup := seen[name]; dup {
			return nil, lockError(hcl.Diagnostics{{
				Severity: hcl.DiagError, Summary: "Duplicate plugin block",
				Detail:  fmt.Sprintf("Plugin %q is already locked at %s; keep one block.", name, prev),
				Subject: block.DefRange.Ptr(),
			}})
		}
		seen[name] = block.DefRange
		p, diags := parseLockedPlugin(name, block)
		if diags.HasErrors() {
			return nil, lockError(diags)
		}
		l.Plugins = append(l.Plugins, p)
	}
	return l, nil
}

func parseLockedPlugin(name string, block *hcl.Block) (LockedPlugin, hcl.Diagnostics) {
	p := LockedPlugin{Name: name}
	if name == "" {
		return p, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Empty plugin name", Subject: block.DefRange.Ptr()}}
	}
	body, diags := block.Body.Content(pluginSchema)
	if diags.HasErrors() {
		return p, diags
	}
	str := func(attr string) (string, hcl.Diagnostics) {
		a, ok := body.Attributes[attr]
		if !ok {
			return "", nil
		}
		var s string
		d := decodeAttr(a, cty.String, func(v cty.Value) { s = v.AsString() })
		return s, d
	}
	list := func(attr string) ([]string, hcl.Diagnostics) {
		a, ok := body.Attributes[attr]
		if !ok {
			return nil, nil
		}
		var out []string
		d := decodeAttr(a, cty.List(cty.String), func(v cty.Value) {
			for _, e := range v.AsValueSlice() {
				out = append(out, e.AsString())
			}
		})
		return out, d
	}
	var d hcl.Diagnostics
	p.Version, d = str("version")
	diags = append(diags, d...)
	p.Source, d = str("source")
	diags = append(diags, d...)
	p.Command, d = list("command")
	diags = append(diags, d...)
	p.Hashes, d = list("hashes")
	diags = append(diags, d...)
	if a, ok := body.Attributes["files"]; ok {
		diags = append(diags, decodeAttr(a, cty.Map(cty.String), func(v cty.Value) {
			p.Files = map[string]string{}
			for k, e := range v.AsValueMap() {
				p.Files[k] = e.AsString()
			}
		})...)
	}
	if diags.HasErrors() {
		return p, diags
	}
	if (p.Source == "") == (len(p.Command) == 0) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Source or command",
			Detail:  fmt.Sprintf("Plugin %q must set exactly one of source and command.", name),
			Subject: block.DefRange.Ptr(),
		})
	}
	hashesRange := body.Attributes["hashes"].Expr.Range()
	if len(p.Hashes) == 0 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "No hashes",
			Detail: "A locked plugin needs at least one hash; run `duplexmpe lock`.", Subject: &hashesRange,
		})
	}
	for _, h := range p.Hashes {
		if err := checkHashSyntax(h); err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Invalid hash", Detail: err.Error(), Subject: &hashesRange,
			})
		}
	}
	return p, diags
}

func decodeAttr(a *hcl.Attribute, want cty.Type, set func(cty.Value)) hcl.Diagnostics {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return diags
	}
	v, err := convert.Convert(v, want)
	if err == nil && (!v.IsWhollyKnown() || v.IsNull()) {
		err = errors.New("value is null")
	}
	if err == nil && want.IsListType() {
		for _, e := range v.AsValueSlice() {
			if e.IsNull() {
				err = errors.New("list holds a null")
			}
		}
	}
	if err != nil {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Invalid " + a.Name,
			Detail:  fmt.Sprintf("%s must be %s: %v.", a.Name, want.FriendlyName(), err),
			Subject: a.Expr.Range().Ptr(),
		}}
	}
	set(v)
	return nil
}

// checkHashSyntax accepts "sha256:" and 64 lowercase hex digits, or "h1:" and the
// base64 of 32 bytes.
func checkHashSyntax(h string) error {
	switch {
	case strings.HasPrefix(h, "sha256:"):
		hexPart := strings.TrimPrefix(h, "sha256:")
		if b, err := hex.DecodeString(hexPart); err != nil || len(b) != 32 || strings.ToLower(hexPart) != hexPart {
			return fmt.Errorf("%q: want sha256: and 64 lowercase hex digits", h)
		}
	case strings.HasPrefix(h, "h1:"):
		if b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h, "h1:")); err != nil || len(b) != 32 {
			return fmt.Errorf("%q: want h1: and the base64 of a SHA-256", h)
		}
	default:
		return fmt.Errorf("%q: want a \"sha256:\" or \"h1:\" hash", h)
	}
	return nil
}

func lockError(diags hcl.Diagnostics) error {
	var msgs []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("%s:%d: %s", d.Subject.Filename, d.Subject.Start.Line, msg)
		}
		msgs = append(msgs, msg)
	}
	return fmt.Errorf("bad lock file: %s (fix it, or delete it and run `duplexmpe lock`)", strings.Join(msgs, "; "))
}

// Get finds a plugin's entry.
func (l *Lock) Get(name string) (LockedPlugin, bool) {
	for _, p := range l.Plugins {
		if p.Name == name {
			return p, true
		}
	}
	return LockedPlugin{}, false
}

// Set adds or replaces a plugin's entry.
func (l *Lock) Set(p LockedPlugin) {
	for i := range l.Plugins {
		if l.Plugins[i].Name == p.Name {
			l.Plugins[i] = p
			return
		}
	}
	l.Plugins = append(l.Plugins, p)
}

// Check reports whether spec, whose files hash to hash (SpecHash), is what the lock
// pins: same source or command, same version when both name one, hash among the
// pinned hashes. A mismatch is a *PinError.
func (l *Lock) Check(spec Spec, hash string) error {
	p, ok := l.Get(spec.Name)
	if !ok {
		return &PinError{Plugin: spec.Name, Lock: l.path, What: PinMissing}
	}
	if p.Source != spec.Source || !slices.Equal(p.Command, spec.Command) {
		return &PinError{Plugin: spec.Name, Lock: l.path, What: PinSpec,
			Pinned: p.describe(), Got: LockedPlugin{Source: spec.Source, Command: spec.Command}.describe()}
	}
	if p.Version != "" && spec.Version != "" && p.Version != spec.Version {
		return &PinError{Plugin: spec.Name, Lock: l.path, What: PinVersion, Pinned: p.Version, Got: spec.Version}
	}
	if !slices.Contains(p.Hashes, hash) {
		return &PinError{Plugin: spec.Name, Lock: l.path, What: PinHash, Pinned: strings.Join(p.Hashes, ", "), Got: hash}
	}
	return nil
}

// What a PinError found different.
const (
	PinMissing = "missing" // the plugin is not in the lock file
	PinSpec    = "spec"    // another source or command
	PinVersion = "version" // another version
	PinHash    = "hash"    // its files hash to something the lock does not pin
)

// PinError is a plugin that does not match its lock file entry: What differs, what the
// lock pins and what the plugin is now. Its message names the plugin and the lock file;
// core/pluginstart adds the run file's line and the command that fixes it.
type PinError struct {
	Plugin, Lock string
	What         string // PinMissing, PinSpec, PinVersion or PinHash
	Pinned, Got  string
	// Changed, for PinHash, names what differs from the pin (Changed): "changed P",
	// "added P", "removed P".
	Changed []string
}

func (e *PinError) Error() string {
	where := e.Lock
	if where == "" {
		where = "the lock file"
	}
	switch e.What {
	case PinMissing:
		return fmt.Sprintf("plugin %q is not in %s", e.Plugin, where)
	case PinSpec:
		return fmt.Sprintf("plugin %q: %s pins %s, but the run file says %s", e.Plugin, where, e.Pinned, e.Got)
	case PinVersion:
		return fmt.Sprintf("plugin %q: %s pins version %q, but it is now version %q", e.Plugin, where, e.Pinned, e.Got)
	default:
		msg := fmt.Sprintf("plugin %q: its files hash to %s, but %s pins %s", e.Plugin, e.Got, where, e.Pinned)
		if len(e.Changed) > 0 {
			shown := e.Changed[:min(len(e.Changed), 10)]
			msg += " (" + strings.Join(shown, ", ")
			if len(e.Changed) > len(shown) {
				msg += fmt.Sprintf(" and %d more", len(e.Changed)-len(shown))
			}
			msg += ")"
		}
		return msg
	}
}

// Changed names what differs between the pinned plugin p and spec (resolved paths) as
// it is now: for a source plugin, its binary; for a command plugin, the files under its
// dir that were changed, added or removed since the pin (DiffFiles), when the lock file
// lists them. Nil when nothing can be named.
func (p LockedPlugin) Changed(spec Spec) []string {
	switch {
	case spec.Source != "":
		return []string{"changed " + spec.resolve(spec.Source)}
	case len(spec.Command) > 0 && spec.Dir != "" && p.Files != nil:
		_, now, err := HashDirFiles(spec.Dir, spec.HashSkip...)
		if err != nil {
			return nil
		}
		return DiffFiles(p.Files, now)
	}
	return nil
}

// Path is where the lock was read from or written to; empty for a new lock.
func (l *Lock) Path() string { return l.path }

func (p LockedPlugin) describe() string {
	if p.Source != "" {
		return fmt.Sprintf("source %q", p.Source)
	}
	return fmt.Sprintf("command %q", p.Command)
}

// Format renders the lock file: a header, then the plugin blocks sorted by name, hashes
// sorted, so the same lock always gives the same bytes.
func (l *Lock) Format() []byte {
	f := hclwrite.NewEmptyFile()
	root := f.Body()
	root.AppendUnstructuredTokens(hclwrite.Tokens{{
		Type:  hclsyntax.TokenComment,
		Bytes: []byte("# This file is maintained by `duplexmpe lock`: the plugins this run resolved to.\n# Commit it; edit it only by re-running `duplexmpe lock`.\n"),
	}})
	plugins := slices.Clone(l.Plugins)
	sort.Slice(plugins, func(i, j int) bool { return plugins[i].Name < plugins[j].Name })
	for _, p := range plugins {
		root.AppendNewline()
		b := root.AppendNewBlock("plugin", []string{p.Name}).Body()
		if p.Version != "" {
			b.SetAttributeValue("version", cty.StringVal(p.Version))
		}
		if p.Source != "" {
			b.SetAttributeValue("source", cty.StringVal(p.Source))
		}
		if len(p.Command) > 0 {
			b.SetAttributeValue("command", stringList(p.Command))
		}
		hashes := slices.Clone(p.Hashes)
		sort.Strings(hashes)
		b.SetAttributeValue("hashes", stringList(hashes))
		if len(p.Files) > 0 {
			files := map[string]cty.Value{}
			for k, v := range p.Files {
				files[k] = cty.StringVal(v)
			}
			b.SetAttributeValue("files", cty.MapVal(files))
		}
	}
	return hclwrite.Format(f.Bytes())
}

func stringList(ss []string) cty.Value {
	if len(ss) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(ss))
	for i, s := range ss {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}

// Write saves the lock atomically and durably (core/atomicfile).
func (l *Lock) Write(path string) error {
	if err := atomicfile.WriteFile(path, l.Format()); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	l.path = path
	return nil
}
