// Package randgraph is the one random-graph generator: every fuzzer and
// measurement that needs random HLO modules draws them here.
//
//   - FromBytes (graph.go) decodes fuzz bytes into a module of ~25 op kinds, f32
//     and s32, with dots, reductions, while loops and conditionals, plus a pipeline
//     configuration: the passes' FuzzPipeline.
//   - Exact (exact.go) decodes fuzz bytes into a graph of the 14 ops whose f32
//     results are correctly rounded on every device, straight-line or as a loop
//     body (ExactLoop): the root's FuzzDifferential against cpuref.
//   - Module (this file) generates a layered DAG with stated parameters, for the
//     exact scheduler against the heuristic (docs/results.md).
//
// The two byte decoders share the reader (past the input's end every byte reads
// 0) and the value pool (graph: pick, find, push).
//
// Module's modules are DAGs of
// elementwise and data-movement instructions over f32[rows, 64] arrays in layers:
// every node reads 1 to FanIn earlier values (parameters or nodes, recent layers
// preferred), and its size is drawn from Rows. Values that nothing reads are
// returned in the root tuple.
package randgraph

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Params are the generator's parameters.
type Params struct {
	Nodes  int     // instructions before fusion
	Width  int     // most nodes per layer
	FanIn  int     // most operands per node (1 or 2 are used by elementwise ops)
	Params int     // entry parameters
	Rows   []int64 // row counts sizes are drawn from, uniformly (each row 64 f32: 256 B)
	Seed   uint64
}

func (p Params) String() string {
	return fmt.Sprintf("%d nodes, width ≤ %d, fan-in ≤ %d, %d parameters, rows %v × 64 f32, seed %d",
		p.Nodes, p.Width, p.FanIn, p.Params, p.Rows, p.Seed)
}

type value struct {
	name  string
	rows  int64
	layer int
}

// Module returns the HLO text of one random module.
func Module(p Params) string {
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	var sb strings.Builder
	fmt.Fprintf(&sb, "HloModule g%d\n\nENTRY %%main (", p.Seed)
	var vals []value
	var body []string
	for i := range p.Params {
		rows := p.Rows[rng.IntN(len(p.Rows))]
		name := fmt.Sprintf("p%d", i)
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s: f32[%d,64]", name, rows)
		body = append(body, fmt.Sprintf("  %%%s = f32[%d,64] parameter(%d)", name, rows, i))
		vals = append(vals, value{name, rows, 0})
	}
	read := map[string]bool{}
	layer, inLayer := 1, 0
	for i := range p.Nodes {
		if inLayer == p.Width || (inLayer > 0 && rng.IntN(3) == 0) {
			layer, inLayer = layer+1, 0
		}
		inLayer++
		x := pick(rng, vals, layer)
		name := fmt.Sprintf("n%d", i)
		var line string
		var rows int64
		switch k := rng.IntN(6); {
		case k < 2 || p.FanIn < 2: // unary
			rows = x.rows
			line = fmt.Sprintf("  %%%s = f32[%d,64] %s(%%%s)", name, rows, []string{"tanh", "exponential", "negate"}[rng.IntN(3)], x.name)
		case k < 4: // binary with a value of the same size, else a shrink
			if y, ok := pickSame(rng, vals, x); ok {
				rows = x.rows
				line = fmt.Sprintf("  %%%s = f32[%d,64] %s(%%%s, %%%s)", name, rows, []string{"add", "multiply", "maximum"}[rng.IntN(3)], x.name, y.name)
				read[y.name] = true
				break
			}
			fallthrough
		case k == 4: // shrink: the first rows
			rows = max(x.rows/4, 1)
			line = fmt.Sprintf("  %%%s = f32[%d,64] slice(%%%s), slice={[0:%d], [0:64]}", name, rows, x.name, rows)
		case x.rows > 1024: // not past 4096 rows (1 MiB): shrink instead
			rows = x.rows / 4
			line = fmt.Sprintf("  %%%s = f32[%d,64] slice(%%%s), slice={[0:%d], [0:64]}", name, rows, x.name, rows)
		default: // grow: four copies
			rows = 4 * x.rows
			line = fmt.Sprintf("  %%%s = f32[%d,64] concatenate(%%%s, %%%s, %%%s, %%%s), dimensions={0}", name, rows, x.name, x.name, x.name, x.name)
		}
		read[x.name] = true
		body = append(body, line)
		vals = append(vals, value{name, rows, layer})
	}
	var outs []value
	for _, v := range vals[p.Params:] {
		if !read[v.name] {
			outs = append(outs, v)
		}
	}
	var shapes, names []string
	for _, v := range outs {
		shapes = append(shapes, fmt.Sprintf("f32[%d,64]", v.rows))
		names = append(names, "%"+v.name)
	}
	tuple := "(" + strings.Join(shapes, ", ") + ")"
	fmt.Fprintf(&sb, ") -> %s {\n%s\n  ROOT %%out = %s tuple(%s)\n}\n", tuple, strings.Join(body, "\n"), tuple, strings.Join(names, ", "))
	return sb.String()
}

// pick prefers values of the last two layers.
func pick(rng *rand.Rand, vals []value, layer int) value {
	var recent []value
	for _, v := range vals {
		if v.layer >= layer-2 {
			recent = append(recent, v)
		}
	}
	if len(recent) > 0 && rng.IntN(4) != 0 {
		return recent[rng.IntN(len(recent))]
	}
	return vals[rng.IntN(len(vals))]
}

// pickSame picks another value of x's size.
func pickSame(rng *rand.Rand, vals []value, x value) (value, bool) {
	var same []value
	for _, v := range vals {
		if v.rows == x.rows && v.name != x.name {
			same = append(same, v)
		}
	}
	if len(same) == 0 {
		return value{}, false
	}
	return same[rng.IntN(len(same))], true
}
