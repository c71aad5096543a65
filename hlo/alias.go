package hlo

import (
	"fmt"
	"slices"
	"strings"
)

// The module header's input_output_alias, as XLA prints it:
//
//	HloModule m, input_output_alias={ {0}: (1, {}, must-alias), {1}: (2, {}, may-alias) }
//
// Each entry says that the entry root's leaf at an output shape index may (or must)
// be written over the storage of a parameter's leaf: the parameter is donated to the
// output, as jax.jit's donate_argnums arranges. The kind is optional in the text and
// defaults to may-alias, as in XLA's parser.

// AliasKind says whether an output must be written over its parameter's storage or
// only may be.
type AliasKind uint8

// The alias kinds.
const (
	MayAlias AliasKind = iota
	MustAlias
)

func (k AliasKind) String() string { return [...]string{"may-alias", "must-alias"}[k] }

// InputOutputAlias is one entry of input_output_alias: the output leaf at shape
// index Output of the entry root shares the storage of leaf ParamIndex of entry
// parameter Param.
type InputOutputAlias struct {
	Output     []int64
	Param      int64
	ParamIndex []int64
	Kind       AliasKind
}

func (a InputOutputAlias) String() string {
	return fmt.Sprintf("%s: (%d, %s, %s)", intList(a.Output), a.Param, intList(a.ParamIndex), a.Kind)
}

func (a InputOutputAlias) clone() InputOutputAlias {
	return InputOutputAlias{Output: slices.Clone(a.Output), Param: a.Param, ParamIndex: slices.Clone(a.ParamIndex), Kind: a.Kind}
}

func cloneAliases(as []InputOutputAlias) []InputOutputAlias {
	if as == nil {
		return nil
	}
	out := make([]InputOutputAlias, len(as))
	for i, a := range as {
		out[i] = a.clone()
	}
	return out
}

// aliasText is the header attribute's value: { a, b } (XLA's spacing).
func aliasText(as []InputOutputAlias) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// LeafIndex is the position, among s.Leaves(), of the array leaf at shape index
// idx (XLA's ShapeIndex: one tuple element number per level; {} is s itself), and
// that leaf's shape. An index that leaves the shape or names a tuple is an error.
func (s Shape) LeafIndex(idx []int64) (int, Shape, error) {
	pos, cur := 0, s
	for depth, i := range idx {
		if !cur.IsTuple() || i < 0 || i >= int64(len(cur.Elems)) {
			return 0, Shape{}, fmt.Errorf("shape index %s: element %d at depth %d is not in %v", intList(idx), i, depth, cur)
		}
		for _, e := range cur.Elems[:i] {
			pos += len(e.Leaves())
		}
		cur = cur.Elems[i]
	}
	if cur.IsTuple() {
		return 0, Shape{}, fmt.Errorf("shape index %s names the tuple %v, not an array", intList(idx), cur)
	}
	return pos, cur, nil
}

// AliasLeaves are an alias's output leaf and parameter leaf, as positions among the
// root's and the parameter's array leaves.
type AliasLeaves struct {
	Output, Param, ParamLeaf int
	Kind                     AliasKind
}

// ResolveAliases checks m's input_output_alias against its entry (indices in
// range and naming arrays, the two leaves of equal shape, no output leaf and no
// parameter leaf named twice) and returns each entry's leaves, in entry order.
// An error names the entry.
func ResolveAliases(m *Module) ([]AliasLeaves, error) {
	out := make([]AliasLeaves, 0, len(m.InputOutputAlias))
	outputs, params := map[int]bool{}, map[[2]int]bool{}
	for _, a := range m.InputOutputAlias {
		r, err := resolveAlias(m.Entry, a)
		if err != nil {
			return nil, fmt.Errorf("input_output_alias %v: %w", a, err)
		}
		if outputs[r.Output] {
			return nil, fmt.Errorf("input_output_alias %v: output %s is aliased twice", a, intList(a.Output))
		}
		if params[[2]int{r.Param, r.ParamLeaf}] {
			return nil, fmt.Errorf("input_output_alias %v: parameter %d leaf %s is aliased twice", a, a.Param, intList(a.ParamIndex))
		}
		outputs[r.Output], params[[2]int{r.Param, r.ParamLeaf}] = true, true
		out = append(out, r)
	}
	return out, nil
}

func resolveAlias(entry *Computation, a InputOutputAlias) (AliasLeaves, error) {
	if a.Kind > MustAlias {
		return AliasLeaves{}, fmt.Errorf("unknown alias kind %d", a.Kind)
	}
	if a.Param < 0 || a.Param >= int64(len(entry.Params)) {
		return AliasLeaves{}, fmt.Errorf("parameter %d is out of range: the entry %s takes %d", a.Param, entry.Name, len(entry.Params))
	}
	o, os, err := entry.Root.Shape.LeafIndex(a.Output)
	if err != nil {
		return AliasLeaves{}, fmt.Errorf("output: %w", err)
	}
	p, ps, err := entry.Params[a.Param].Shape.LeafIndex(a.ParamIndex)
	if err != nil {
		return AliasLeaves{}, fmt.Errorf("parameter %d: %w", a.Param, err)
	}
	if !os.Equal(ps) {
		return AliasLeaves{}, fmt.Errorf("the output leaf is %v but the parameter leaf is %v", os, ps)
	}
	return AliasLeaves{Output: o, Param: int(a.Param), ParamLeaf: p, Kind: a.Kind}, nil
}

// parseModuleAttributes reads the header's ", name=value" pairs: input_output_alias
// is kept, the others (entry_computation_layout, is_scheduled, …) skipped.
func (p *parser) parseModuleAttributes() ([]InputOutputAlias, error) {
	var aliases []InputOutputAlias
	err := p.parseScopeAttributes(onModule, "module header", func(name token) (bool, error) {
		if name.text != "input_output_alias" {
			return false, nil
		}
		as, err := parseBracedList(p, "input_output_alias entries", p.parseInputOutputAlias)
		aliases = as
		return true, err
	})
	return aliases, err
}

// parseInputOutputAlias reads {output index}: (parameter, {parameter index}[, kind]).
func (p *parser) parseInputOutputAlias() (a InputOutputAlias, err error) {
	if a.Output, err = p.parseIntList(); err != nil {
		return a, err
	}
	if err = p.expect(":", "after an output index in input_output_alias"); err != nil {
		return a, err
	}
	if err = p.expect("(", "to open a (parameter, index, kind) entry"); err != nil {
		return a, err
	}
	if a.Param, err = p.parseInt(); err != nil {
		return a, err
	}
	if err = p.expect(",", "after the parameter number"); err != nil {
		return a, err
	}
	if a.ParamIndex, err = p.parseIntList(); err != nil {
		return a, err
	}
	if p.accept(",") {
		switch t := p.next(); {
		case t.kind == tokName && t.text == "may-alias":
			a.Kind = MayAlias
		case t.kind == tokName && t.text == "must-alias":
			a.Kind = MustAlias
		default:
			return a, p.errorAt(t.pos, "expected may-alias or must-alias in input_output_alias, found %s", t.describe())
		}
	}
	return a, p.expect(")", "to close a (parameter, index, kind) entry")
}
