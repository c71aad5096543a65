package codegen

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// emitReduce is the per-output-element reduction: the accumulators start at the init
// values and take the reduced elements in row-major order of the reduced dims, one
// inlined to_apply call each; the same order as cpuref, so results match exactly.
// Large reductions at a kernel's root use the workgroup tree (reduce_tree.go).
func emitReduce(g *gen, in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
	n := len(in.Operands) / 2
	inputs, inits := in.Operands[:n], in.Operands[n:]
	x := inputs[0]
	dims := sortedDims(in.Attrs.Dimensions)
	var sizes []int64
	for _, d := range dims {
		sizes = append(sizes, x.Shape.Dims[d])
	}
	initVals := make([]spirv.ID, n)
	for i, v := range inits {
		initVals[i] = g.emit(v, scalarIndex)
	}
	return g.accumulate(in.Called[0], inputs, initVals, product(sizes), func(j spirv.ID) []spirv.ID {
		return scatterIndex(x.Shape.Rank(), dims, g.k.delinearize(j, sizes), idx)
	})
}

// accumulate folds count elements of inputs, at the indices at(j) for j in
// [0, count), into accumulators starting at init with the reducer c.
func (g *gen) accumulate(c *hlo.Computation, inputs []*hlo.Instruction, init []spirv.ID, count int64, at func(j spirv.ID) []spirv.ID) []spirv.ID {
	return g.fold(c, init, count, nil, func(j spirv.ID) []spirv.ID {
		src := at(j)
		vals := make([]spirv.ID, len(inputs))
		for i, x := range inputs {
			vals[i] = g.emit(x, src)
		}
		return vals
	})
}

// fold runs acc = c(acc, vals(j)) for j in [0, count), skipping the j where cond
// (if not nil) is false; the values are emitted under the condition, so a skipped
// element is never read.
func (g *gen) fold(c *hlo.Computation, init []spirv.ID, count int64, cond, vals func(j spirv.ID) []spirv.ID) []spirv.ID {
	k, f := g.k, g.k.f
	if count == 0 {
		return init
	}
	accs := make([]spirv.ID, len(init))
	for i, v := range init {
		accs[i] = k.variable(k.m.TypeOf(v), v, "acc")
	}
	g.loop(count, func(j spirv.ID) {
		body := func() {
			vs := vals(j)
			cur := make([]spirv.ID, len(accs))
			for i, a := range accs {
				cur[i] = f.Load(a)
			}
			res := g.call(c, append(cur, vs...))
			for i, a := range accs {
				f.Store(a, res[i])
			}
		}
		if cond == nil {
			body()
			return
		}
		if cs := cond(j); len(cs) > 0 {
			f.If(k.all(cs...), func() { g.scoped(body) }, nil)
		} else {
			body()
		}
	})
	out := make([]spirv.ID, len(accs))
	for i, a := range accs {
		out[i] = f.Load(a)
	}
	return out
}

// sortedDims returns a sorted copy.
func sortedDims(dims []int64) []int64 {
	s := slices.Clone(dims)
	slices.Sort(s)
	return s
}

func product(xs []int64) int64 {
	p := int64(1)
	for _, x := range xs {
		p *= x
	}
	return p
}

// scatterIndex builds a rank-r index from values for the listed dims (in order) and
// the rest, in order, for the other dims.
func scatterIndex(r int, dims []int64, at, rest []spirv.ID) []spirv.ID {
	idx := make([]spirv.ID, r)
	j, l := 0, 0
	for d := range idx {
		if j < len(dims) && dims[j] == int64(d) {
			idx[d] = at[j]
			j++
		} else {
			idx[d] = rest[l]
			l++
		}
	}
	return idx
}
