package config

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The bounds of a run file (issue 31): a 1.2 KB file of ten locals, each ten
// interpolations of the one before, took validate past 3 GB, and 100,000 nested
// brackets overflowed the parser's Go stack. Each is refused, naming the file and line,
// before it costs more than these.
const (
	// maxNesting bounds how deep brackets, braces, parentheses and template
	// interpolations nest; real run files nest a handful deep.
	maxNesting = 100
	// maxOperators bounds the operators of one attribute's expression.
	maxOperators = 1000
	// maxBlocks bounds the blocks of a run file, nested ones included.
	maxBlocks = 10000
	// maxValueBytes bounds one evaluated value (a string's bytes, a collection's
	// elements' together), the size of what file() reads.
	maxValueBytes = maxFileBytes
	// maxExpandedBytes bounds all values one load evaluates together.
	maxExpandedBytes = 4 * maxValueBytes
)

// checkNesting scans the run file's tokens (the lexer is not recursive) and refuses
// one nested past maxNesting before the recursive parser sees it.
func checkNesting(src []byte, filename string) hcl.Diagnostics {
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	refuse := func(t hclsyntax.Token, what string, bound int) hcl.Diagnostics {
		r := t.Range
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Nested too deeply",
			Detail: fmt.Sprintf("%s %s more than %d deep here (line %d); a run file needs a handful. Flatten it, or name the inner values as locals.",
				filename, what, bound, r.Start.Line),
			Subject: &r}}
	}
	// open holds the openers not yet closed; ops counts the operators of the
	// expression being read (each one is a level of the parser's recursion too).
	var open []hclsyntax.TokenType
	ops := 0
	for _, t := range tokens {
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			if open = append(open, t.Type); len(open) > maxNesting {
				return refuse(t, "nests brackets, braces, parentheses or ${...}", maxNesting)
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd:
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		case hclsyntax.TokenNewline:
			if len(open) == 0 || open[len(open)-1] == hclsyntax.TokenOBrace {
				ops = 0 // the end of an attribute
			}
		case hclsyntax.TokenBang, hclsyntax.TokenMinus, hclsyntax.TokenPlus, hclsyntax.TokenStar,
			hclsyntax.TokenSlash, hclsyntax.TokenPercent, hclsyntax.TokenAnd, hclsyntax.TokenOr,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq,
			hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq, hclsyntax.TokenQuestion:
			if ops++; ops > maxOperators {
				return refuse(t, "chains operators (!, -, +, ?:, ...) in one value", maxOperators)
			}
		}
	}
	return nil
}

// countBlocks refuses a run file of more than maxBlocks blocks, nested ones included.
func countBlocks(body *hclsyntax.Body, filename string) hcl.Diagnostics {
	n := 0
	var walk func(b *hclsyntax.Body) *hclsyntax.Block
	walk = func(b *hclsyntax.Body) *hclsyntax.Block {
		for _, blk := range b.Blocks {
			if n++; n > maxBlocks {
				return blk
			}
			if over := walk(blk.Body); over != nil {
				return over
			}
		}
		return nil
	}
	if over := walk(body); over != nil {
		r := over.DefRange()
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Too many blocks",
			Detail:  fmt.Sprintf("%s has more than %d blocks (this one, line %d, is past the bound). Split the run into several files.", filename, maxBlocks, r.Start.Line),
			Subject: &r}}
	}
	return nil
}

// valueSize is the bytes of v's strings and the count of its other leaves and
// elements, counted up to limit (it stops there: a list of lists repeating one value
// is cheap to build and exponential to walk).
func valueSize(v cty.Value, limit int64) int64 {
	var n int64
	var walk func(v cty.Value)
	walk = func(v cty.Value) {
		if n > limit {
			return
		}
		n++
		if v.IsNull() || !v.IsKnown() || v.IsMarked() {
			return
		}
		ty := v.Type()
		switch {
		case ty == cty.String:
			n += int64(len(v.AsString()))
		case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
			for it := v.ElementIterator(); it.Next() && n <= limit; {
				k, e := it.Element()
				if ty.IsMapType() || ty.IsObjectType() {
					walk(k)
				}
				walk(e)
			}
		}
	}
	walk(v)
	return n
}

// eval evaluates expr in ctx within the bounds: before evaluating, the expression's
// own text plus every value it refers to (each time it refers to it) must be within
// maxValueBytes, and within what is left of maxExpandedBytes for the whole load; the
// result is checked too (a function may make more than it was given). A for
// expression, whose result multiplies its body by a collection, is refused.
func (d *decoder) eval(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	rng := expr.Range()
	tooBig := func(what string) (cty.Value, hcl.Diagnostics) {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Value too large",
			Detail: fmt.Sprintf("The expression at %s line %d %s; a run file's values are small. Write the value out, or read a large text with file() once.",
				rng.Filename, rng.Start.Line, what),
			Subject: &rng}}
	}
	if se, ok := expr.(hclsyntax.Expression); ok {
		var forRange *hcl.Range
		hclsyntax.VisitAll(se, func(n hclsyntax.Node) hcl.Diagnostics {
			if f, ok := n.(*hclsyntax.ForExpr); ok && forRange == nil {
				r := f.SrcRange
				forRange = &r
			}
			return nil
		})
		if forRange != nil {
			return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "For expressions are not supported",
				Detail:  fmt.Sprintf("%s line %d uses a for expression; run files do not (docs/run-files.md lists the functions and values a run file may use). Write the list or map out.", forRange.Filename, forRange.Start.Line),
				Subject: forRange}}
		}
	}
	left := int64(maxExpandedBytes) - d.expanded
	limit := min(int64(maxValueBytes), left)
	bound := int64(rng.End.Byte - rng.Start.Byte)
	if ctx != nil {
		for _, t := range expr.Variables() {
			v, diags := t.TraverseAbs(ctx)
			if diags.HasErrors() {
				continue // the evaluation reports it
			}
			if bound += valueSize(v, limit-bound); bound > limit {
				if limit < maxValueBytes {
					return tooBig(fmt.Sprintf("would take the run file's values past %d MiB in all (it refers to %s, among others)", maxExpandedBytes>>20, traversalName(t)))
				}
				return tooBig(fmt.Sprintf("would expand past %d MiB (it refers to %s, among others, each time it is written)", maxValueBytes>>20, traversalName(t)))
			}
		}
	}
	v, diags := expr.Value(ctx)
	if size := valueSize(v, limit); size > limit {
		return tooBig(fmt.Sprintf("is more than %d MiB", limit>>20))
	} else {
		d.expanded += max(size, bound)
	}
	return v, diags
}

// boundedFormat is format() refusing a width or precision that would make a result
// past maxValueBytes ("%01000000000d" would allocate a gigabyte).
var boundedFormat = function.New(&function.Spec{
	Params:   stdlib.FormatFunc.Params(),
	VarParam: stdlib.FormatFunc.VarParam(),
	Type:     function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, ty cty.Type) (cty.Value, error) {
		if !args[0].IsKnown() || args[0].IsNull() {
			return stdlib.FormatFunc.Call(args)
		}
		spec := args[0].AsString()
		for i := 0; i < len(spec); i++ {
			if spec[i] != '%' {
				continue
			}
			j := i + 1
			for j < len(spec) && (spec[j] == '[' || spec[j] == ']' || spec[j] == '.' || spec[j] == '+' || spec[j] == '-' || spec[j] == '#' || spec[j] == ' ' || (spec[j] >= '0' && spec[j] <= '9')) {
				k := j
				for k < len(spec) && spec[k] >= '0' && spec[k] <= '9' {
					k++
				}
				if k > j {
					if n, err := strconv.Atoi(spec[j:k]); err != nil || n > 1000 {
						return cty.UnknownVal(cty.String), fmt.Errorf("the format %q asks for a width or precision of %s; at most 1000", spec, spec[j:k])
					}
					j = k
					continue
				}
				j++
			}
			i = j
		}
		return stdlib.FormatFunc.Call(args)
	},
})

// boundedJoin is join() refusing a result past maxValueBytes before building it (the
// separator is repeated once per element).
var boundedJoin = function.New(&function.Spec{
	Params:   stdlib.JoinFunc.Params(),
	VarParam: stdlib.JoinFunc.VarParam(),
	Type:     function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, ty cty.Type) (cty.Value, error) {
		total := int64(0)
		if args[0].IsKnown() && !args[0].IsNull() {
			sep := int64(len(args[0].AsString()))
			for _, l := range args[1:] {
				if l.IsKnown() && !l.IsNull() {
					total += int64(l.LengthInt())*sep + valueSize(l, maxValueBytes)
				}
			}
		}
		if total > maxValueBytes {
			return cty.UnknownVal(cty.String), fmt.Errorf("the joined string would be more than %d MiB", maxValueBytes>>20)
		}
		return stdlib.JoinFunc.Call(args)
	},
})
