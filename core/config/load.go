package config

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"golang.org/x/text/unicode/norm"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/room"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
)

// Load reads and checks the run file at path. The returned File is never nil: when the
// diagnostics hold errors it is incomplete and good only for its Sources (to print the
// diagnostics with snippets).
func Load(path string, opts Options) (*File, hcl.Diagnostics) {
	parser := hclparse.NewParser()
	src, err := readRunFile(path)
	if err != nil {
		return &File{Path: path, Sources: parser.Files(), Locals: map[string]cty.Value{}}, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Cannot read the run file", Detail: err.Error() + "; check the path.",
		}}
	}
	return parse(parser, src, path, opts)
}

// parse checks the nesting before the (recursive) parser reads src.
func parse(parser *hclparse.Parser, src []byte, path string, opts Options) (*File, hcl.Diagnostics) {
	if diags := checkNesting(src, path); diags.HasErrors() {
		return &File{Path: path, Sources: map[string]*hcl.File{path: {Bytes: src}}, Locals: map[string]cty.Value{}}, diags
	}
	hf, diags := parser.ParseHCL(src, path)
	return load(path, parser, hf, diags, opts)
}

// maxRunFileBytes bounds a run file; real ones are a few kilobytes.
const maxRunFileBytes = 16 << 20

func readRunFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if info.Size() > maxRunFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than a run file can be (%d)", path, info.Size(), maxRunFileBytes)
	}
	return os.ReadFile(path)
}

// Parse is Load for a run file already in memory; filename names it in diagnostics and
// its directory is the one relative paths resolve against.
func Parse(src []byte, filename string, opts Options) (*File, hcl.Diagnostics) {
	return parse(hclparse.NewParser(), src, filename, opts)
}

func load(path string, parser *hclparse.Parser, hf *hcl.File, diags hcl.Diagnostics, opts Options) (*File, hcl.Diagnostics) {
	f := &File{Path: path, Sources: parser.Files(), Locals: map[string]cty.Value{}}
	if diags.HasErrors() || hf == nil {
		return f, diags
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return f, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot resolve the run file's directory", Detail: err.Error()})
	}
	f.Dir = dir
	if b, ok := hf.Body.(*hclsyntax.Body); ok {
		if over := countBlocks(b, path); over.HasErrors() {
			return f, append(diags, over...)
		}
	}
	if b, ok := hf.Body.(*hclsyntax.Body); ok && len(b.Blocks) == 0 && len(b.Attributes) == 0 {
		r := b.SrcRange
		return f, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Empty run file",
			Detail:  fmt.Sprintf("%s declares nothing (it is empty or holds only comments). A run file holds plugin, dataset and evaluation blocks: start from examples/runs/minimal.hcl; docs/run-files.md describes the language.", path),
			Subject: &r})
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd = dir
	}
	l := &loader{f: f, opts: opts, d: &decoder{dir: dir}}
	l.d.ctx = &hcl.EvalContext{
		Functions: functions(dir, opts.Env),
		Variables: map[string]cty.Value{
			"path": cty.ObjectVal(map[string]cty.Value{"root": cty.StringVal(dir), "cwd": cty.StringVal(cwd)}),
		},
	}
	l.d.diags = diags
	l.run(hf.Body)
	return f, l.d.diags
}

type loader struct {
	f    *File
	opts Options
	d    *decoder
	// uses records the roles each plugin is given, in order, and where.
	uses      map[string][]string
	useRanges map[string]map[string]hcl.Range
}

func (l *loader) run(body hcl.Body) {
	content, diags := body.Content(Spec.Schema())
	l.d.add(diags...)
	byType := map[string][]*hcl.Block{}
	for _, b := range content.Blocks {
		byType[b.Type] = append(byType[b.Type], b)
	}
	l.variables(byType["variable"])
	l.locals(byType["locals"])

	plugins := l.labels(byType["plugin"])
	datasets := l.labels(byType["dataset"])
	l.uses, l.useRanges = map[string][]string{}, map[string]map[string]hcl.Range{}
	for _, b := range plugins {
		l.plugin(b)
	}
	pluginNames := blockNames(plugins)
	for _, b := range datasets {
		l.dataset(b, pluginNames)
	}
	datasetNames := blockNames(datasets)
	references := l.labels(byType["reference"])
	for _, b := range references {
		l.reference(b, pluginNames, datasetNames)
	}
	referenceNames := blockNames(references)
	for _, b := range l.labels(byType["evaluation"]) {
		l.evaluation(b, pluginNames, datasetNames, referenceNames)
	}
	l.uniqueOuts()
	l.hashSkips()
	l.scenarioDirs()
	for _, p := range l.f.Plugins {
		p.Uses, p.UseRanges = l.uses[p.Name], l.useRanges[p.Name]
		if len(p.Uses) == 0 && !l.d.diags.HasErrors() && !contains(l.opts.CommandLineUses, p.Name) {
			r := p.DeclRange
			l.d.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unused plugin",
				Detail: fmt.Sprintf("Plugin %q is declared but no dataset, reference or evaluation uses it (a judge kept for `duplexmpe score RUN_DIR --judge %s` is used by that command only).", p.Name, p.Name), Subject: &r})
		}
		if a, ok := p.AttrRanges["role"]; ok && p.Role != "" && len(p.Uses) > 0 && !contains(p.Uses, "model") {
			l.d.add(errorf(a, "Role of a plugin that is not a model",
				"Plugin %q sets role = %q, but it is used as %s, not as a model: role says whether a model is under test or a baseline or reference (docs/protocol.md section 6.3). Remove it.",
				p.Name, p.Role, strings.Join(p.Uses, " and ")))
		}
	}
}

// uniqueOuts refuses two blocks (datasets, references, evaluations) writing to the same
// directory: they would overwrite each other's results.
func (l *loader) uniqueOuts() {
	type owner struct {
		kind, name string
		rng        hcl.Range
	}
	seen := map[string]owner{}
	check := func(kind, name, out string, rng hcl.Range) {
		if prev, dup := seen[out]; dup {
			l.d.add(errorf(rng, "Shared output directory",
				"%s %q writes to %s, like %s %q (%s). Give each its own out.", kind, name, out, prev.kind, prev.name, prev.rng))
			return
		}
		seen[out] = owner{kind, name, rng}
	}
	for _, ds := range l.f.Datasets {
		check("dataset", ds.Name, ds.Out, ds.DeclRange)
	}
	for _, r := range l.f.References {
		check("reference", r.Name, r.Out, r.DeclRange)
	}
	for _, ev := range l.f.Evaluations {
		check("evaluation", ev.Name, ev.Out, ev.DeclRange)
	}
}

// hashSkips leaves out of a command plugin's h1 hash (pluginhost.Spec.HashSkip) what
// lies under its dir but belongs to the run, not to the plugin: the run file, its lock
// files, and the output folders of the run file's datasets, references and evaluations.
// Hashed with the plugin, they changed its identity at every run, lock and build (issue
// 23). An output folder that is the plugin's dir itself is refused: the run would write
// among the plugin's files.
func (l *loader) hashSkips() {
	runFile, err := filepath.Abs(l.f.Path)
	if err != nil {
		return // load already failed on the run file's directory
	}
	type owned struct{ what, path string }
	var run []owned
	for _, p := range []string{runFile, LockPathFor(runFile), l.f.LegacyLockPath()} {
		run = append(run, owned{"", p})
	}
	for _, ds := range l.f.Datasets {
		run = append(run, owned{fmt.Sprintf("dataset %q", ds.Name), ds.Out})
	}
	for _, r := range l.f.References {
		run = append(run, owned{fmt.Sprintf("reference %q", r.Name), r.Out})
	}
	for _, ev := range l.f.Evaluations {
		run = append(run, owned{fmt.Sprintf("evaluation %q", ev.Name), ev.Out})
	}
	for _, p := range l.f.Plugins {
		if p.Spec.Dir == "" || len(p.Spec.Command) == 0 {
			continue // only a command plugin is pinned by its dir
		}
		for _, o := range run {
			rel, err := filepath.Rel(p.Spec.Dir, o.path)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			if rel == "." && o.what == "" {
				continue // dir names the run file itself: warnMissing says it is no folder
			}
			if rel == "." {
				rng := p.DeclRange
				if a, ok := p.AttrRanges["dir"]; ok {
					rng = a
				}
				l.d.add(errorf(rng, "Output in a plugin's dir",
					"%s writes to %s, which is the dir of plugin %q: a command plugin is pinned by the files under its dir, so the run would write among them. Give the %s an out of its own (out = \"runs/<name>\").",
					o.what, o.path, p.Name, strings.Fields(o.what)[0]))
				continue
			}
			p.Spec.HashSkip = append(p.Spec.HashSkip, filepath.ToSlash(rel))
		}
	}
}

// labels drops blocks whose label is not an identifier or repeats an earlier one.
func (l *loader) labels(blocks []*hcl.Block) []*hcl.Block {
	seen := map[string]*hcl.Block{}
	var out []*hcl.Block
	for _, b := range blocks {
		name := b.Labels[0]
		if r, _, bad := termsafe.Invisible(name); bad {
			l.d.add(errorf(b.LabelRanges[0], "Invalid block name",
				"%q has the invisible character %U: two names differing by it would print alike; remove it.", termsafe.Short(name, 64), r))
			continue
		}
		if !hclsyntax.ValidIdentifier(name) {
			short := termsafe.Short(name, 64)
			l.d.add(errorf(b.LabelRanges[0], "Invalid block name",
				"%q cannot be referenced as %s.%s: a name starts with a letter and has only letters, digits, underscores and dashes.", short, b.Type, short))
			continue
		}
		if !norm.NFC.IsNormalString(name) {
			l.d.add(errorf(b.LabelRanges[0], "Invalid block name",
				"%s is not written in Unicode normal form C (a letter and its accent as one character): write it as %q, which prints the same.", termsafe.Short(name, 64), norm.NFC.String(name)))
			continue
		}
		if prev, dup := seen[name]; dup {
			l.d.add(errorf(b.DefRange, "Duplicate "+b.Type+" block",
				"A %s block named %q was already declared at %s. Names must be unique; rename one of them.", b.Type, name, prev.DefRange))
			continue
		}
		seen[name] = b
		out = append(out, b)
	}
	return out
}

func blockNames(blocks []*hcl.Block) []string {
	var names []string
	for _, b := range blocks {
		names = append(names, b.Labels[0])
	}
	return names
}

func (l *loader) use(plugin, role string, rng hcl.Range) {
	if _, seen := l.useRanges[plugin][role]; seen {
		return
	}
	if l.useRanges[plugin] == nil {
		l.useRanges[plugin] = map[string]hcl.Range{}
	}
	l.useRanges[plugin][role] = rng
	l.uses[plugin] = append(l.uses[plugin], role)
}

// content decodes a block's body against its spec and rejects repeated nested blocks
// that may appear only once.
func (l *loader) content(body hcl.Body, spec *BlockSpec) (*hcl.BodyContent, map[string]*hcl.Block) {
	content, diags := body.Content(spec.Schema())
	l.d.add(diags...)
	once := map[string]*hcl.Block{}
	for _, b := range content.Blocks {
		if prev, dup := once[b.Type]; dup {
			l.d.add(errorf(b.DefRange, "Duplicate "+b.Type+" block",
				"Only one %s block is allowed here; the first is at %s. Merge them.", b.Type, prev.DefRange))
			continue
		}
		once[b.Type] = b
	}
	return content, once
}

func (l *loader) variables(blocks []*hcl.Block) {
	spec := Spec.Block("variable")
	// Defaults may use functions and path, but not other variables or locals.
	defaultsCtx := l.d.ctx
	vals := map[string]cty.Value{}
	declared := map[string]bool{}
	for _, b := range l.labels(blocks) {
		content, _ := l.content(b.Body, spec)
		v := &Variable{Name: b.Labels[0], DeclRange: b.DefRange, Default: cty.NilVal}
		declared[v.Name] = true
		if a := content.Attributes["description"]; a != nil {
			v.Description, _ = l.d.str(a)
		}
		if a := content.Attributes["default"]; a != nil {
			val, diags := l.d.eval(a.Expr, defaultsCtx)
			l.d.add(diags...)
			if diags.HasErrors() {
				val = cty.DynamicVal
			}
			v.Default = val
		}
		l.setVariable(v)
		l.f.Variables = append(l.f.Variables, v)
		if v.Value != cty.NilVal {
			vals[v.Name] = v.Value
		}
	}
	var unknown []string
	for name := range l.opts.Vars {
		if !declared[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		detail := fmt.Sprintf("--var %s=... sets a variable the run file does not declare.", name)
		var names []string
		for n := range declared {
			names = append(names, n)
		}
		if s := suggest(name, names); s != "" {
			detail += fmt.Sprintf(" Did you mean %q?", s)
		} else {
			detail += fmt.Sprintf(" Declare it with variable %q { default = ... }.", name)
		}
		l.d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable", Detail: detail})
	}
	l.d.ctx.Variables["var"] = cty.ObjectVal(vals)
}

// setVariable picks the variable's value: --var, then the environment, then the default.
func (l *loader) setVariable(v *Variable) {
	rng := v.DeclRange
	raw, source, given := l.opts.Vars[v.Name], "--var", false
	if _, given = l.opts.Vars[v.Name]; !given {
		envName := VarEnvPrefix + v.Name
		raw, given = l.opts.Env[envName]
		source = envName
	}
	if !given {
		if v.Default == cty.NilVal {
			l.d.add(errorf(rng, "No value for variable",
				"Variable %q has no default. Set it with --var %s=VALUE or the environment variable %s%s.", v.Name, v.Name, VarEnvPrefix, v.Name))
			v.Value = cty.DynamicVal
			return
		}
		v.Value, v.Source = v.Default, "default"
		return
	}
	val, err := parseVariable(raw, v.Default)
	if err != nil {
		l.d.add(errorf(rng, "Invalid value for variable", "%s gives variable %q the value %q: %s.", source, v.Name, raw, err))
		v.Value = cty.DynamicVal // uses of it fail quietly instead of repeating this error
		return
	}
	v.Value, v.Source = val, source
}

// parseVariable converts a value from the command line or environment to the type of the
// variable's default: a string as it is, a number or bool parsed, a list or map written
// as an HCL expression.
func parseVariable(raw string, def cty.Value) (cty.Value, error) {
	if def == cty.NilVal || !def.IsKnown() || def.IsNull() {
		return cty.StringVal(raw), nil
	}
	ty := def.Type()
	switch {
	case ty == cty.String:
		return cty.StringVal(raw), nil
	case ty == cty.Number || ty == cty.Bool:
		v, err := convert.Convert(cty.StringVal(strings.TrimSpace(raw)), ty)
		if err != nil {
			return cty.NilVal, fmt.Errorf("a %s is required", ty.FriendlyName())
		}
		return v, nil
	default:
		expr, diags := hclsyntax.ParseExpression([]byte(raw), "<value>", hcl.InitialPos)
		if diags.HasErrors() {
			return cty.NilVal, fmt.Errorf("write it as an HCL value like the default (%s)", diags.Error())
		}
		v, diags := expr.Value(nil)
		if diags.HasErrors() {
			return cty.NilVal, fmt.Errorf("%s", diags.Error())
		}
		listLike := func(t cty.Type) bool { return t.IsTupleType() || t.IsListType() || t.IsSetType() }
		mapLike := func(t cty.Type) bool { return t.IsObjectType() || t.IsMapType() }
		vt := v.Type()
		if listLike(ty) && listLike(vt) || mapLike(ty) && mapLike(vt) {
			return v, nil
		}
		if cv, err := convert.Convert(v, ty); err == nil {
			return cv, nil
		}
		return cty.NilVal, fmt.Errorf("it must be a value like the default, %s", ty.FriendlyName())
	}
}

func (l *loader) locals(blocks []*hcl.Block) {
	type pending struct {
		attr *hcl.Attribute
		deps []string
	}
	var order []string
	todo := map[string]pending{}
	for _, b := range blocks {
		attrs, diags := b.Body.JustAttributes()
		l.d.add(diags...)
		// JustAttributes returns a map; keep the file's order.
		var sorted []*hcl.Attribute
		for _, a := range attrs {
			sorted = append(sorted, a)
		}
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Range.Start.Byte < sorted[j].Range.Start.Byte })
		for _, a := range sorted {
			if prev, dup := todo[a.Name]; dup {
				l.d.add(errorf(a.NameRange, "Duplicate local value", "local.%s was already defined at %s.", a.Name, prev.attr.NameRange))
				continue
			}
			p := pending{attr: a}
			for _, t := range a.Expr.Variables() {
				if t.RootName() != "local" || len(t) < 2 {
					continue
				}
				if step, ok := t[1].(hcl.TraverseAttr); ok {
					p.deps = append(p.deps, step.Name)
				}
			}
			todo[a.Name] = p
			order = append(order, a.Name)
		}
	}
	vals := map[string]cty.Value{}
	setCtx := func() { l.d.ctx.Variables["local"] = cty.ObjectVal(vals) }
	setCtx()
	done := map[string]bool{}
	for progress := true; progress; {
		progress = false
		for _, name := range order {
			p := todo[name]
			if done[name] {
				continue
			}
			ready := true
			for _, dep := range p.deps {
				if _, declared := todo[dep]; declared && !done[dep] {
					ready = false
				}
			}
			if !ready {
				continue
			}
			done[name], progress = true, true
			v, diags := l.d.eval(p.attr.Expr, l.d.ctx)
			l.d.add(diags...)
			if diags.HasErrors() {
				v = cty.DynamicVal // later uses fail quietly instead of repeating this error
			}
			vals[name] = v
			l.f.Locals[name] = v
			setCtx()
		}
	}
	for _, name := range order {
		if !done[name] {
			p := todo[name]
			l.d.add(errorf(p.attr.Range, "Circular local values",
				"local.%s depends on itself through local.%s. Break the cycle.", name, strings.Join(p.deps, ", local.")))
		}
	}
}

func (l *loader) plugin(b *hcl.Block) {
	content, once := l.content(b.Body, Spec.Block("plugin"))
	p := &PluginBlock{Name: b.Labels[0], DeclRange: b.DefRange, AttrRanges: map[string]hcl.Range{}, ctx: l.d.ctx}
	attrs := content.Attributes
	for name, a := range attrs {
		p.AttrRanges[name] = a.Range
	}
	d := l.d
	if a := attrs["source"]; a != nil {
		if s, ok := d.nonEmpty(a); ok {
			p.WrittenSource, p.Spec.Source = s, d.resolve(s)
		}
	}
	if a := attrs["command"]; a != nil {
		if argv, ok := d.stringList(a); ok {
			if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
				d.add(errorf(a.Expr.Range(), "Empty command", "command needs at least the program to run, e.g. [\"python3\", \"-m\", \"my_plugin\"]."))
			}
			p.Spec.Command = argv
		}
	}
	if a := attrs["dir"]; a != nil {
		if s, ok := d.nonEmpty(a); ok {
			p.WrittenDir, p.Spec.Dir = s, d.resolve(s)
		}
	}
	if a := attrs["env"]; a != nil {
		p.Spec.Env, _ = d.stringMap(a)
	}
	if a := attrs["version"]; a != nil {
		p.Spec.Version, _ = d.nonEmpty(a)
	}
	if a := attrs["reattach"]; a != nil {
		p.Spec.Reattach, _ = d.str(a)
	}
	positive := func(name string, dst *time.Duration) {
		if a := attrs[name]; a != nil {
			if dur, ok := d.duration(a); ok {
				if dur == 0 {
					d.add(errorf(a.Expr.Range(), "Invalid duration", "%s = 0 would fail every call; give a positive duration, or remove it for the default.", name))
				}
				*dst = dur
			}
		}
	}
	if a := attrs["role"]; a != nil {
		if r, ok := d.str(a); ok {
			if !contains(protocol.Roles, r) {
				var others []string
				for _, o := range protocol.Roles[1:] {
					others = append(others, strconv.Quote(o))
				}
				d.add(errorf(a.Expr.Range(), "Invalid role", "role = %q: a model is %s (under test, the default), %s.",
					r, strconv.Quote(protocol.RoleTest), strings.Join(others, ", ")))
			} else {
				p.Role = r
			}
		}
	}
	positive("start_timeout", &p.Spec.StartTimeout)
	positive("conversation_start_timeout", &p.Spec.ConversationStartTimeout)
	positive("frame_timeout", &p.Spec.FrameTimeout)
	positive("call_timeout", &p.Spec.CallTimeout)
	positive("conversation_timeout", &p.Spec.ConversationTimeout)
	if a := attrs["log_limit_mb"]; a != nil {
		if n, ok := d.whole(a); ok {
			if n < 1 || n > 1<<20 {
				d.add(errorf(a.Expr.Range(), "Invalid log_limit_mb", "log_limit_mb = %d must be between 1 and %d (MiB).", n, 1<<20))
			}
			p.Spec.LogLimit = n << 20
		}
	}
	// Relative values of the plugin's path-typed config fields resolve here, like every
	// other path of the run file (the host makes them absolute before Configure).
	p.Spec.ConfigDir = d.dir
	switch {
	case attrs["source"] != nil && attrs["command"] != nil:
		d.add(errorf(attrs["command"].Range, "Conflicting plugin attributes",
			"Plugin %q sets both source and command; set source for an executable, or command (with dir) for a script.", p.Name))
	case attrs["source"] == nil && attrs["command"] == nil && p.Spec.Reattach == "":
		// A reattached plugin needs neither, but reattach usually comes from env() and
		// is empty on most runs.
		d.add(errorf(b.DefRange, "Missing plugin executable",
			"Plugin %q needs source = \"path/to/executable\" or command = [\"program\", \"arg\", ...].", p.Name))
	}
	if a := attrs["checksum"]; a != nil {
		if sum, ok := d.nonEmpty(a); ok {
			p.Spec.Checksum = sum
			if err := checkChecksum(sum, p.Spec.Source != "", len(p.Spec.Command) > 0 && p.Spec.Dir != ""); err != nil {
				d.add(errorf(a.Expr.Range(), "Invalid checksum", "%s", err))
			} else if p.Spec.Reattach != "" {
				d.add(errorf(a.Expr.Range(), "Checksum with reattach",
					"Plugin %q is reattached (reattach is set), so the host does not start it and cannot check its checksum. Remove checksum, or unset reattach.", p.Name))
			}
		}
	}
	if p.Spec.Source != "" {
		l.checkMissing(attrs["source"], p.Spec.Source, false, "plugin executable", fmt.Sprintf("Plugin %q: its executable", p.Name), "Build it first (make build) or fix the path.", l.opts.PluginsMustExist)
	}
	if p.Spec.Dir != "" {
		l.checkMissing(attrs["dir"], p.Spec.Dir, true, "plugin directory", fmt.Sprintf("Plugin %q: its directory", p.Name), "Fix the path.", l.opts.PluginsMustExist)
	}
	p.Config, p.ConfigRange = hcl.EmptyBody(), b.DefRange
	if cb := once["config"]; cb != nil {
		p.Config, p.ConfigRange = cb.Body, cb.DefRange
	}
	l.f.Plugins = append(l.f.Plugins, p)
}

// checkChecksum checks the form of a checksum pin.
// hasDir means a command plugin with a dir: what an h1 hash covers.
func checkChecksum(sum string, hasSource, hasDir bool) error {
	algo, digest, _ := strings.Cut(sum, ":")
	switch algo {
	case "sha256":
		if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
			return fmt.Errorf("%q: a sha256 checksum is \"sha256:\" and 64 lower-case hex digits (sha256sum's output)", sum)
		}
		if !hasSource {
			return fmt.Errorf("a sha256 checksum pins the source executable; this plugin has no source (use an h1: checksum of dir)")
		}
	case "h1":
		if b, err := base64.StdEncoding.DecodeString(digest); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("%q: an h1 checksum is \"h1:\" and the base64 of a SHA-256, 44 characters (duplexmpe lock writes it)", sum)
		}
		if !hasDir {
			return fmt.Errorf("an h1 checksum pins the files under dir of a command plugin; this plugin has no command and dir (pin a source executable with sha256:)")
		}
	default:
		return fmt.Errorf("%q: a checksum starts with \"sha256:\" (an executable) or \"h1:\" (a directory)", sum)
	}
	return nil
}

// warnMissing warns when a path the run needs does not exist yet: it may be built later,
// so it is not an error here, but it is the likeliest cause of a later failure.
func (l *loader) warnMissing(a *hcl.Attribute, path string, wantDir bool, what, hint string) {
	l.checkMissing(a, path, wantDir, what, "", hint, false)
}

// checkMissing is warnMissing with the subject of the detail named (whose path it is)
// and, when must is set, a missing path an error.
func (l *loader) checkMissing(a *hcl.Attribute, path string, wantDir bool, what, whose, hint string, must bool) {
	if a == nil {
		return
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		rng := a.Expr.Range()
		sev := hcl.DiagWarning
		if must {
			sev = hcl.DiagError
		}
		detail := fmt.Sprintf("%s does not exist. %s", path, hint)
		if whose != "" {
			detail = fmt.Sprintf("%s %s does not exist. %s", whose, path, hint)
		}
		l.d.add(&hcl.Diagnostic{Severity: sev, Summary: "Missing " + what, Detail: detail, Subject: &rng})
	case wantDir && !info.IsDir():
		l.d.add(errorf(a.Expr.Range(), "Not a directory", "%s is a file; %s must be a directory.", path, a.Name))
	case !wantDir && info.IsDir():
		l.d.add(errorf(a.Expr.Range(), "Not a file", "%s is a directory; %s must be a file.", path, a.Name))
	}
}

func (l *loader) dataset(b *hcl.Block, plugins []string) {
	spec := Spec.Block("dataset")
	content, once := l.content(b.Body, spec)
	ds := &Dataset{Name: b.Labels[0], DeclRange: b.DefRange, Preamble: "default", AttrRanges: map[string]hcl.Range{}, VoiceSeed: 1, VoiceMinSemitones: 2}
	attrs, d := content.Attributes, l.d
	for name, a := range attrs {
		ds.AttrRanges[name] = a.Range
	}
	if a := attrs["tts"]; a != nil {
		if name, ok := d.ref(a.Expr, "tts", "plugin", plugins); ok {
			ds.TTS = name
			l.use(name, "tts", a.Expr.Range())
		}
	}
	if a := attrs["voices"]; a != nil {
		if voices, ok := d.stringMap(a); ok {
			ds.Voices = voices
			checkVoices(d, a, voices)
		}
	}
	l.voicePool(ds, attrs, b)
	if a := attrs["preamble"]; a != nil {
		if s, ok := d.nonEmpty(a); ok {
			ds.Preamble = s
			if s != "default" {
				ds.Preamble = d.resolve(s)
				l.warnMissing(a, ds.Preamble, false, "preamble file", "Fix the path, or write preamble = \"default\".")
			}
		}
	}
	if a := attrs["narrator"]; a != nil {
		if s, ok := d.nonEmpty(a); ok {
			ds.Narrator = s
			keys := make([]string, 0, len(ds.Voices))
			for k := range ds.Voices {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if ds.Voices[k] == s {
					d.add(errorf(a.Expr.Range(), "Narrator is a speaker's voice",
						"narrator = %q is also speaker %s's voice; the preamble would sound like one of the people in the room. Choose a voice no speaker uses.", s, k))
					break
				}
			}
			if _, in := ds.VoicePool[s]; in {
				d.add(errorf(a.Expr.Range(), "Narrator is in the voice pool",
					"narrator = %q is in voice_pool, so a speaker may have its voice; the preamble would sound like one of the people in the room. Choose a voice outside the pool.", s))
			}
		}
	} else if ds.VoicePool != nil {
		if a := attrs["voice_pool"]; a != nil {
			d.add(errorf(a.Expr.Range(), "Missing narrator",
				"Dataset %q draws its speakers' voices from voice_pool, so the preamble's voice cannot default to a speaker's: add narrator = \"...\", a voice outside the pool.", ds.Name))
		}
	}
	if a := attrs["loudness"]; a != nil {
		if v, ok := d.number(a); ok {
			if v < -40 || v > -10 {
				d.add(errorf(a.Expr.Range(), "Loudness out of range", "loudness = %g LUFS; it must be between -40 and -10 (EBU R128's target is -23).", v))
			} else {
				ds.Loudness = v
			}
		}
	}
	ds.Out = d.resolve(filepath.Join("build", "datasets", ds.Name))
	if a := attrs["out"]; a != nil {
		if p, ok := d.path(a); ok {
			ds.Out = p
		}
	}
	if rb := once["room"]; rb != nil {
		ds.Room = l.room(rb)
	}
	gen := once["generate"]
	switch a := attrs["scenarios"]; {
	case a != nil && gen != nil:
		d.add(errorf(gen.DefRange, "Conflicting dataset sources", "Dataset %q sets scenarios and a generate block; keep one.", ds.Name))
	case a == nil && gen == nil:
		d.add(errorf(b.DefRange, "Missing dataset source",
			"Dataset %q needs scenarios = \"directory\" or a generate { generator = \"procedural\", pairs = N } block.", ds.Name))
	case a != nil:
		if p, ok := d.path(a); ok {
			ds.Scenarios = p // a missing one: scenarioDirs, once every dataset's out is known
		}
	default:
		ds.Generate = l.generate(gen, plugins)
		if a := attrs["voices"]; a != nil && ds.Voices != nil && ds.Generate.FourSpeakerShare > 0 {
			if _, ok := ds.Voices["D"]; !ok {
				d.add(errorf(a.Expr.Range(), "Missing voice",
					"four_speaker_share = %g generates scenarios with a fourth speaker, D, who needs a voice; add D to voices, or set four_speaker_share = 0.", ds.Generate.FourSpeakerShare))
			}
		}
	}
	l.f.Datasets = append(l.f.Datasets, ds)
}

// voicePool reads voice_pool, voice_seed and voice_min_semitones; exactly one of voices
// and voice_pool is set.
func (l *loader) voicePool(ds *Dataset, attrs hcl.Attributes, b *hcl.Block) {
	d := l.d
	a := attrs["voice_pool"]
	switch {
	case a != nil && attrs["voices"] != nil:
		d.add(errorf(a.Expr.Range(), "Conflicting voices", "Dataset %q sets voices and voice_pool; keep one: voices fixes each speaker's voice, voice_pool draws them per scenario.", ds.Name))
	case a == nil && attrs["voices"] == nil:
		d.add(errorf(b.DefRange, "Missing voices", "Dataset %q needs voices = { A = \"...\", B = \"...\", C = \"...\" } or a voice_pool = { voice = F0 in Hz, ... }.", ds.Name))
	}
	for _, name := range []string{"voice_seed", "voice_min_semitones"} {
		if x := attrs[name]; x != nil && a == nil {
			d.add(errorf(x.Expr.Range(), "Setting without voice_pool", "%s only applies to a voice_pool; dataset %q has none.", name, ds.Name))
		}
	}
	if a == nil {
		return
	}
	if groups, ok := d.numberMaps(a); ok {
		pool, sex := map[string]float64{}, map[string]string{}
		for _, g := range sortedNames(groups) {
			sx, known := map[string]string{"women": "female", "men": "male"}[g]
			if !known {
				d.add(errorf(a.Expr.Range(), "Unknown voice group", "voice_pool has a group %q; its groups are women (speakers A and C) and men (B and D).", g))
				continue
			}
			if len(groups[g]) < 2 {
				d.add(errorf(a.Expr.Range(), "Voice pool too small", "voice_pool.%s has %d voices; a scenario has two %s, each with a voice of their own: give at least 2.", g, len(groups[g]), g))
			}
			for _, k := range sortedNames(groups[g]) {
				f := groups[g][k]
				switch {
				case strings.TrimSpace(k) == "":
					d.add(errorf(a.Expr.Range(), "Empty voice", "voice_pool.%s has an empty voice name.", g))
				case !(f > 20 && f < 2000):
					d.add(errorf(a.Expr.Range(), "Bad F0", "voice_pool.%s[%q] = %g: give the voice's median F0 in Hz (between 20 and 2000; make measure-tts prints it).", g, k, f))
				case sex[k] != "":
					d.add(errorf(a.Expr.Range(), "Voice in both groups", "voice_pool has %q among the women and the men; keep it in one.", k))
				}
				pool[k], sex[k] = f, sx
			}
		}
		for _, g := range []string{"women", "men"} {
			if _, ok := groups[g]; !ok {
				d.add(errorf(a.Expr.Range(), "Voice pool too small", "voice_pool has no %s; give voice_pool = { women = { voice = F0, ... }, men = { ... } }.", g))
			}
		}
		ds.VoicePool, ds.VoiceSex = pool, sex
	}
	if x := attrs["voice_seed"]; x != nil {
		if n, ok := d.whole(x); ok {
			ds.VoiceSeed = n
		}
	}
	if x := attrs["voice_min_semitones"]; x != nil {
		if v, ok := d.number(x); ok {
			if v < 0 || v > 12 {
				d.add(errorf(x.Expr.Range(), "voice_min_semitones out of range", "voice_min_semitones = %g; it must be between 0 and 12.", v))
			} else {
				ds.VoiceMinSemitones = v
			}
		}
	}
}

func checkVoices(d *decoder, a *hcl.Attribute, voices map[string]string) {
	rng := a.Expr.Range()
	var keys []string
	for k := range voices {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k != "A" && k != "B" && k != "C" && k != "D":
			d.add(errorf(rng, "Unknown speaker", "voices has a key %q; speakers are A, B, C and D.", k))
		case strings.TrimSpace(voices[k]) == "":
			d.add(errorf(rng, "Empty voice", "voices.%s is empty; name a voice of the TTS plugin.", k))
		}
	}
	for _, k := range []string{"A", "B", "C"} {
		if _, ok := voices[k]; !ok {
			d.add(errorf(rng, "Missing voice", "voices needs a voice for speaker %s (A, B and C are required; D for four-speaker scenarios).", k))
		}
	}
}

// room reads a dataset's room block (docs/dataset.md, "Rooms").
func (l *loader) room(b *hcl.Block) *Room {
	content, _ := l.content(b.Body, Spec.Block("dataset").Block("room"))
	r := &Room{Seed: 1, DeclRange: b.DefRange}
	attrs, d := content.Attributes, l.d
	if a := attrs["preset"]; a != nil {
		if s, ok := d.str(a); ok {
			r.Preset = s
			names := room.Names()
			if !contains(names, s) {
				detail := fmt.Sprintf("preset = %q is not a room; use %s.", s, quoteList(names))
				if sug := suggest(s, names); sug != "" {
					detail = fmt.Sprintf("preset = %q is not a room. Did you mean %q?", s, sug)
				}
				d.add(errorf(a.Expr.Range(), "Unknown room", "%s", detail))
			}
		}
	}
	if a := attrs["seed"]; a != nil {
		if n, ok := d.whole(a); ok {
			r.Seed = n
		}
	}
	if a := attrs["reuse"]; a != nil {
		if p, ok := d.path(a); ok {
			r.Reuse = p
		}
	}
	return r
}

func (l *loader) generate(b *hcl.Block, plugins []string) *Generate {
	content, _ := l.content(b.Body, Spec.Block("dataset").Block("generate"))
	g := &Generate{Seed: 1, FourSpeakerShare: 0.25, DeclRange: b.DefRange}
	attrs, d := content.Attributes, l.d
	if a := attrs["generator"]; a != nil {
		if s, ok := d.str(a); ok {
			g.Generator = s
			if !contains(Generators, s) {
				detail := fmt.Sprintf("generator = %q is not known; use %s.", s, quoteList(Generators))
				if sug := suggest(s, Generators); sug != "" {
					detail = fmt.Sprintf("generator = %q is not known. Did you mean %q?", s, sug)
				}
				d.add(errorf(a.Expr.Range(), "Unknown generator", "%s", detail))
			}
		}
	}
	if a := attrs["llm"]; a != nil {
		if name, ok := d.ref(a.Expr, "llm", "plugin", plugins); ok {
			g.LLM = name
			l.use(name, "llm", a.Expr.Range())
		}
		if g.Generator == "procedural" {
			d.add(errorf(a.Range, "Unused llm", "generator = \"procedural\" uses no LLM; remove llm, or use generator = \"llm\"."))
		}
	} else if g.Generator == "llm" {
		d.add(errorf(b.DefRange, "Missing llm", "generator = \"llm\" needs llm = plugin.<name>."))
	}
	if a := attrs["pairs"]; a != nil {
		if n, ok := d.whole(a); ok {
			if n < 1 {
				d.add(errorf(a.Expr.Range(), "Invalid pairs", "pairs = %d must be at least 1.", n))
			}
			g.Pairs = int(n)
		}
	}
	if a := attrs["seed"]; a != nil {
		g.Seed, _ = d.whole(a)
	}
	if a := attrs["four_speaker_share"]; a != nil {
		if x, ok := d.number(a); ok {
			if x < 0 || x > 1 {
				d.add(errorf(a.Expr.Range(), "Invalid four_speaker_share", "four_speaker_share = %g must be between 0 and 1.", x))
			}
			g.FourSpeakerShare = x
		}
	}
	return g
}

// reference decodes a reference block. Its defaults match core/reference's (a cli test
// keeps retries equal to reference.DefaultRetries).
func (l *loader) reference(b *hcl.Block, plugins, datasets []string) {
	content, _ := l.content(b.Body, Spec.Block("reference"))
	r := &Reference{Name: b.Labels[0], DeclRange: b.DefRange, Runs: 1, Retries: 2, AttrRanges: map[string]hcl.Range{}}
	attrs, d := content.Attributes, l.d
	for name, a := range attrs {
		r.AttrRanges[name] = a.Range
	}
	if a := attrs["llm"]; a != nil {
		if name, ok := d.ref(a.Expr, "llm", "plugin", plugins); ok {
			r.LLM = name
			l.use(name, "llm", a.Expr.Range())
		}
	}
	if a := attrs["judge"]; a != nil {
		if name, ok := d.ref(a.Expr, "judge", "plugin", plugins); ok {
			r.Judge = name
			l.use(name, "judge", a.Expr.Range())
		}
	}
	if a := attrs["dataset"]; a != nil {
		r.Dataset, _ = d.ref(a.Expr, "dataset", "dataset", datasets)
	}
	atLeast := func(name string, min int64, dst *int) {
		a := attrs[name]
		if a == nil {
			return
		}
		if n, ok := d.whole(a); ok {
			if n < min {
				d.add(errorf(a.Expr.Range(), "Invalid "+name, "%s = %d must be at least %d.", name, n, min))
			}
			*dst = int(n)
		}
	}
	atLeast("runs", 1, &r.Runs)
	atLeast("retries", 0, &r.Retries)
	atLeast("max_tokens", 0, &r.MaxTokens)
	if a := attrs["temperature"]; a != nil {
		if x, ok := d.number(a); ok {
			if x < 0 {
				d.add(errorf(a.Expr.Range(), "Invalid temperature", "temperature = %g must not be negative.", x))
			}
			r.Temperature = &x
		}
	}
	if a := attrs["seed"]; a != nil {
		if n, ok := d.whole(a); ok {
			r.Seed = &n
		}
	}
	r.Out = d.resolve(filepath.Join("runs", "reference-"+r.Name))
	if a := attrs["out"]; a != nil {
		if p, ok := d.path(a); ok {
			r.Out = p
		}
	}
	l.f.References = append(l.f.References, r)
}

func (l *loader) evaluation(b *hcl.Block, plugins, datasets, references []string) {
	content, once := l.content(b.Body, Spec.Block("evaluation"))
	ev := &Evaluation{Name: b.Labels[0], DeclRange: b.DefRange, Seed: 1, Repeats: 1,
		Protocol: protocol.Defaults(), VAD: protocol.DefaultVAD()}
	attrs, d := content.Attributes, l.d
	if a := attrs["dataset"]; a != nil {
		ev.Dataset, _ = d.ref(a.Expr, "dataset", "dataset", datasets)
	}
	if a := attrs["models"]; a != nil {
		exprs, diags := hcl.ExprList(a.Expr)
		if diags.HasErrors() {
			d.add(errorf(a.Expr.Range(), "Invalid models", "models must be a list of plugin references, such as [plugin.silent, plugin.always_talk]."))
		} else if len(exprs) == 0 {
			d.add(errorf(a.Expr.Range(), "No models", "models must name at least one model plugin."))
		}
		seen := map[string]bool{}
		for _, e := range exprs {
			name, ok := d.ref(e, "models", "plugin", plugins)
			if !ok {
				continue
			}
			if seen[name] {
				d.add(errorf(e.Range(), "Duplicate model", "plugin.%s is listed twice in models; list each model once.", name))
				continue
			}
			seen[name] = true
			ev.Models = append(ev.Models, name)
			l.use(name, "model", e.Range())
		}
	}
	for _, role := range []string{"asr", "judge"} {
		if a := attrs[role]; a != nil {
			if name, ok := d.ref(a.Expr, role, "plugin", plugins); ok {
				l.use(name, role, a.Expr.Range())
				if role == "asr" {
					ev.ASR = name
				} else {
					ev.Judge = name
				}
			}
		}
	}
	if a := attrs["concurrency"]; a != nil {
		if n, ok := d.whole(a); ok {
			if n < 0 {
				d.add(errorf(a.Expr.Range(), "Invalid concurrency", "concurrency = %d must be a whole number of conversations, at least 1 (or 0: one per CPU core).", n))
			}
			ev.Concurrency = int(n)
		}
	}
	if a := attrs["seed"]; a != nil {
		ev.Seed, _ = d.whole(a)
	}
	if a := attrs["repeats"]; a != nil {
		if n, ok := d.whole(a); ok {
			if n < 1 || n > MaxRepeats {
				d.add(errorf(a.Expr.Range(), "Invalid repeats", "repeats = %d must be between 1 and %d: every repeat plays every conversation of every model again.", n, MaxRepeats))
			} else {
				ev.Repeats = int(n)
			}
		}
	}
	ev.Out = d.resolve(filepath.Join("runs", ev.Name))
	if a := attrs["out"]; a != nil {
		if p, ok := d.path(a); ok {
			ev.Out = p
		}
	}
	if a := attrs["reference"]; a != nil {
		if name, ok := d.ref(a.Expr, "reference", "reference", references); ok {
			ev.Reference = name
			if r := l.f.Reference(name); r != nil && ev.Dataset != "" && r.Dataset != "" && r.Dataset != ev.Dataset {
				rng := a.Expr.Range()
				d.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Reference on another dataset",
					Detail: fmt.Sprintf("reference.%s decides dataset %q, but evaluation %q plays dataset %q: the report will show results on different scenarios side by side. Point the reference at dataset.%s.",
						name, r.Dataset, ev.Name, ev.Dataset, ev.Dataset), Subject: &rng})
			}
		}
	}
	l.settings(once["protocol"], b, Spec.Block("evaluation").Block("protocol"), &ev.Protocol)
	l.settings(once["vad"], b, Spec.Block("evaluation").Block("vad"), &ev.VAD)
	if !ev.VAD.Causal() {
		rng := b.DefRange
		if vb := once["vad"]; vb != nil {
			rng = vb.DefRange
		}
		d.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "speech_pad makes the VAD non-causal",
			Detail: fmt.Sprintf("Evaluation %q sets speech_pad = %gs. Padding moves an episode's start before its speech and its end by what comes next, so the scheduler, which decides on the audio heard so far, no longer sees the episodes the scorer counts: the wait after T can disagree with the scored presence (docs/protocol.md section 4.2). Leave speech_pad at 0 unless you accept that.",
				ev.Name, ev.VAD.SpeechPad), Subject: &rng})
	}
	l.f.Evaluations = append(l.f.Evaluations, ev)
}

// settings decodes a protocol or vad block into the struct dst points to, field by json
// name, then runs the struct's Validate.
func (l *loader) settings(b, parent *hcl.Block, spec *BlockSpec, dst interface{ Validate() error }) {
	rng := parent.DefRange
	if b != nil {
		rng = b.DefRange
		content, _ := l.content(b.Body, spec)
		for _, as := range spec.Attrs {
			a := content.Attributes[as.Name]
			if a == nil {
				continue
			}
			field, _ := fieldByJSON(reflect.ValueOf(dst), as.Name)
			switch as.Type {
			case TypeDuration:
				if dur, ok := l.d.duration(a); ok {
					field.SetFloat(dur.Seconds())
				}
			case TypeWhole:
				if n, ok := l.d.whole(a); ok {
					field.SetInt(n)
				}
			case TypeNumber:
				if x, ok := l.d.number(a); ok {
					field.SetFloat(x)
				}
			case TypeString:
				if s, ok := l.d.str(a); ok {
					field.SetString(s)
				}
			case TypeBool:
				if v, ok := l.d.boolean(a); ok {
					field.SetBool(v)
				}
			}
		}
	}
	if err := dst.Validate(); err != nil {
		l.d.add(errorf(rng, "Invalid "+spec.Type+" settings", "%s", err))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	var q []string
	for _, s := range list {
		q = append(q, fmt.Sprintf("%q", s))
	}
	return strings.Join(q, " or ")
}
