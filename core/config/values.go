package config

import (
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// decoder evaluates attributes and collects diagnostics; every helper reports at the
// attribute's range and returns ok=false when the value is unusable.
type decoder struct {
	ctx   *hcl.EvalContext
	dir   string
	diags hcl.Diagnostics
	// expanded is the size of every value evaluated so far (eval, maxExpandedBytes).
	expanded int64
}

func (d *decoder) add(diags ...*hcl.Diagnostic) { d.diags = append(d.diags, diags...) }

// value evaluates attr and converts it to ty.
func (d *decoder) value(attr *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	v, diags := d.eval(attr.Expr, d.ctx)
	d.add(diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	return d.convert(attr, v, ty)
}

func (d *decoder) convert(attr *hcl.Attribute, v cty.Value, ty cty.Type) (cty.Value, bool) {
	rng := attr.Expr.Range()
	if v.IsNull() {
		d.add(errorf(rng, "Missing value", "%s is null; give it a value, or remove it to use the default.", attr.Name))
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		// Only an earlier error (a bad variable or local) makes a value unknown; it has
		// been reported already.
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		d.add(errorf(rng, "Incorrect attribute value type", "Inappropriate value for %s: %s.", attr.Name, err.Error()))
		return cty.NilVal, false
	}
	return cv, true
}

func (d *decoder) str(attr *hcl.Attribute) (string, bool) {
	v, ok := d.value(attr, cty.String)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

// nonEmpty is str that also refuses "".
func (d *decoder) nonEmpty(attr *hcl.Attribute) (string, bool) {
	s, ok := d.str(attr)
	if ok && strings.TrimSpace(s) == "" {
		d.add(errorf(attr.Expr.Range(), "Empty value", "%s must not be empty.", attr.Name))
		return "", false
	}
	return s, ok
}

// path is a non-empty string, made absolute against the run file's directory.
func (d *decoder) path(attr *hcl.Attribute) (string, bool) {
	s, ok := d.nonEmpty(attr)
	if !ok {
		return "", false
	}
	return d.resolve(s), true
}

func (d *decoder) resolve(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.dir, p)
}

func (d *decoder) number(attr *hcl.Attribute) (float64, bool) {
	v, ok := d.value(attr, cty.Number)
	if !ok {
		return 0, false
	}
	f, _ := v.AsBigFloat().Float64()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		d.add(errorf(attr.Expr.Range(), "Invalid number", "%s must be a finite number.", attr.Name))
		return 0, false
	}
	return f, true
}

func (d *decoder) whole(attr *hcl.Attribute) (int64, bool) {
	v, ok := d.value(attr, cty.Number)
	if !ok {
		return 0, false
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		d.add(errorf(attr.Expr.Range(), "Invalid whole number", "%s must be a whole number, not %s.", attr.Name, bf.Text('g', -1)))
		return 0, false
	}
	i, acc := bf.Int64()
	if acc != big.Exact {
		d.add(errorf(attr.Expr.Range(), "Number out of range", "%s = %s is out of range.", attr.Name, bf.Text('g', -1)))
		return 0, false
	}
	return i, true
}

func (d *decoder) boolean(attr *hcl.Attribute) (bool, bool) {
	v, ok := d.value(attr, cty.Bool)
	if !ok {
		return false, false
	}
	return v.True(), true
}

// duration reads "800ms", "2s", "1m30s" or a number of seconds; negative durations are
// refused.
func (d *decoder) duration(attr *hcl.Attribute) (time.Duration, bool) {
	v, diags := d.eval(attr.Expr, d.ctx)
	d.add(diags...)
	if diags.HasErrors() {
		return 0, false
	}
	rng := attr.Expr.Range()
	var dur time.Duration
	if !v.IsNull() && v.IsKnown() && v.Type() == cty.Number {
		f, _ := v.AsBigFloat().Float64()
		if math.IsNaN(f) || math.Abs(f) > float64(math.MaxInt64)/float64(time.Second) {
			d.add(errorf(rng, "Invalid duration", "%s = %v seconds is out of range.", attr.Name, v.AsBigFloat().Text('g', -1)))
			return 0, false
		}
		dur = secondsToDuration(f)
	} else {
		cv, ok := d.convert(attr, v, cty.String)
		if !ok {
			return 0, false
		}
		var err error
		dur, err = time.ParseDuration(strings.TrimSpace(cv.AsString()))
		if err != nil {
			d.add(errorf(rng, "Invalid duration", "%s = %q is not a duration. Write a string such as \"800ms\", \"2s\" or \"1m30s\", or a number of seconds.", attr.Name, cv.AsString()))
			return 0, false
		}
	}
	if dur < 0 {
		d.add(errorf(rng, "Invalid duration", "%s = %s must not be negative.", attr.Name, dur))
		return 0, false
	}
	return dur, true
}

func (d *decoder) stringList(attr *hcl.Attribute) ([]string, bool) {
	v, ok := d.value(attr, cty.List(cty.String))
	if !ok {
		return nil, false
	}
	var out []string
	for i, el := range v.AsValueSlice() {
		if el.IsNull() {
			d.add(errorf(attr.Expr.Range(), "Missing value", "Element %d of %s is null.", i, attr.Name))
			return nil, false
		}
		out = append(out, el.AsString())
	}
	return out, true
}

func (d *decoder) stringMap(attr *hcl.Attribute) (map[string]string, bool) {
	v, ok := d.value(attr, cty.Map(cty.String))
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for k, el := range v.AsValueMap() {
		if el.IsNull() {
			d.add(errorf(attr.Expr.Range(), "Missing value", "%s[%q] is null.", attr.Name, k))
			return nil, false
		}
		out[k] = el.AsString()
	}
	return out, true
}

// numberMaps reads a map of maps of numbers ({ group = { key = number } }).
func (d *decoder) numberMaps(attr *hcl.Attribute) (map[string]map[string]float64, bool) {
	v, ok := d.value(attr, cty.Map(cty.Map(cty.Number)))
	if !ok {
		return nil, false
	}
	out := map[string]map[string]float64{}
	for g, inner := range v.AsValueMap() {
		if inner.IsNull() {
			d.add(errorf(attr.Expr.Range(), "Missing value", "%s[%q] is null.", attr.Name, g))
			return nil, false
		}
		out[g] = map[string]float64{}
		for k, el := range inner.AsValueMap() {
			if el.IsNull() {
				d.add(errorf(attr.Expr.Range(), "Missing value", "%s[%q][%q] is null.", attr.Name, g, k))
				return nil, false
			}
			f, _ := el.AsBigFloat().Float64()
			out[g][k] = f
		}
	}
	return out, true
}

// ref resolves a reference such as plugin.flite to the name "flite", which must be
// one of names. kind is the block type ("plugin" or "dataset").
func (d *decoder) ref(expr hcl.Expression, attrName, kind string, names []string) (string, bool) {
	rng := expr.Range()
	trav, diags := hcl.AbsTraversalForExpr(expr)
	if diags.HasErrors() || len(trav) != 2 || trav.RootName() != kind {
		d.add(errorf(rng, "Invalid reference", "%s must be a reference to a %s block, such as %s.<name>.", attrName, kind, kind))
		return "", false
	}
	step, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		d.add(errorf(rng, "Invalid reference", "%s must be a reference to a %s block, such as %s.<name>.", attrName, kind, kind))
		return "", false
	}
	for _, n := range names {
		if n == step.Name {
			return n, true
		}
	}
	detail := fmt.Sprintf("There is no %s block named %q.", kind, step.Name)
	if s := suggest(step.Name, names); s != "" {
		detail += fmt.Sprintf(" Did you mean %s.%s?", kind, s)
	} else if len(names) > 0 {
		sorted := append([]string(nil), names...)
		sort.Strings(sorted)
		detail += fmt.Sprintf(" Declared %s blocks: %s.", kind, strings.Join(sorted, ", "))
	} else {
		detail += fmt.Sprintf(" Declare one with %s %q { ... }.", kind, step.Name)
	}
	d.add(errorf(rng, "Reference to undeclared "+kind, "%s", detail))
	return "", false
}

// Suggest returns the name closest to given, if it is close enough to be a typo, for
// "did you mean" hints; "" otherwise.
func Suggest(given string, names []string) string { return suggest(given, names) }

func suggest(given string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if dist := editDistance(given, n); dist < bestDist {
			best, bestDist = n, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
