package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Windowed reductions, per output element, in the order of XLA's HloEvaluator (and
// cpuref): window positions in row-major order, padding and base-dilation holes
// skipped, the init value applied once.

// windowSizes lists a window's sizes.
func windowSizes(w []hlo.WindowDim) []int64 {
	s := make([]int64, len(w))
	for i, d := range w {
		s[i] = d.Size
	}
	return s
}

// windowSource maps output index out and window position pos (per dim) to the base
// index it reads, with the conditions under which that element exists (none when
// padding and dilation cannot produce holes).
func (k *kernel) windowSource(w []hlo.WindowDim, base []int64, out, pos []spirv.ID) (src, conds []spirv.ID) {
	f := k.f
	src = make([]spirv.ID, len(w))
	for d, wd := range w {
		v := pos[d]
		if wd.WindowDilation != 1 {
			v = f.IMul(v, k.ic(wd.WindowDilation))
		}
		o := out[d]
		if wd.Stride != 1 {
			o = f.IMul(o, k.ic(wd.Stride))
		}
		v = f.IAdd(o, v)
		if wd.PadLow != 0 {
			v = f.ISub(v, k.ic(wd.PadLow))
		}
		if wd.PadLow > 0 || wd.PadHigh > 0 || wd.BaseDilation != 1 {
			conds = append(conds, k.inRange(v, k.ic(0), k.ic(dilatedExtent(base[d], wd.BaseDilation))))
		}
		if wd.BaseDilation != 1 {
			bd := k.ic(wd.BaseDilation)
			conds = append(conds, f.Equal(f.SRem(v, bd), k.ic(0)))
			v = f.SDiv(v, bd)
		}
		src[d] = v
	}
	return src, conds
}

// dilatedExtent is the extent of n elements with dilation-1 holes between them.
func dilatedExtent(n, dilation int64) int64 {
	if n == 0 {
		return 0
	}
	return (n-1)*dilation + 1
}

func emitReduceWindow(g *gen, in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
	n := len(in.Operands) / 2
	inputs, inits := in.Operands[:n], in.Operands[n:]
	w := in.Attrs.Window
	sizes := windowSizes(w)
	init := make([]spirv.ID, n)
	for i, v := range inits {
		init[i] = g.emit(v, scalarIndex)
	}
	var src []spirv.ID
	cond := func(j spirv.ID) []spirv.ID {
		var conds []spirv.ID
		src, conds = g.k.windowSource(w, inputs[0].Shape.Dims, idx, g.k.delinearize(j, sizes))
		return conds
	}
	return g.fold(in.Called[0], init, product(sizes), cond, func(spirv.ID) []spirv.ID {
		vals := make([]spirv.ID, n)
		for i, x := range inputs {
			vals[i] = g.emit(x, src)
		}
		return vals
	})
}

// emitSelectAndScatter is the gather formulation of select-and-scatter: output
// element idx starts at init and takes scatter(acc, source[s]) for every window s
// (in row-major order) whose selected element is idx. A window's selection runs
// over its elements inside the operand in row-major order: the first is selected,
// and each later one replaces it when select(selected, candidate) is false. No
// atomics, and deterministic. Dilation as in reduce-window: window element e of
// window s sits at s·stride − pad_low + e·window_dilation in the base-dilated
// operand, and holes between base elements are skipped like padding.
func emitSelectAndScatter(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	x, source, initV := in.Operands[0], in.Operands[1], in.Operands[2]
	w := in.Attrs.Window
	// Operand element idx sits at P = idx·base_dilation. The windows that may
	// hold it, per dim, start within the window's extent before it: start =
	// s·stride − low in (P − extent, P], at most ceil(extent/stride) windows
	// from sLo upward (the selection decides whether P is one of their elements).
	counts := make([]int64, len(w))
	sLo := make([]spirv.ID, len(w))
	at := make([]spirv.ID, len(w))
	for d, wd := range w {
		extent := dilatedExtent(wd.Size, wd.WindowDilation)
		counts[d] = (extent + wd.Stride - 1) / wd.Stride
		at[d] = idx[d]
		if wd.BaseDilation != 1 {
			at[d] = f.IMul(idx[d], k.ic(wd.BaseDilation))
		}
		a := f.IAdd(at[d], k.ic(wd.PadLow-extent+1))
		ceil := f.SDiv(f.IAdd(a, k.ic(wd.Stride-1)), k.ic(wd.Stride))
		sLo[d] = f.Select(f.LessEqual(a, k.ic(0)), k.ic(0), ceil)
	}
	scatterC := in.Called[1]
	init := []spirv.ID{g.emit(initV, scalarIndex)}
	var s []spirv.ID
	cond := func(j spirv.ID) []spirv.ID {
		c := k.delinearize(j, counts)
		s = make([]spirv.ID, len(w))
		var conds []spirv.ID
		for d, wd := range w {
			s[d] = f.IAdd(sLo[d], c[d])
			start := f.ISub(f.IMul(s[d], k.ic(wd.Stride)), k.ic(wd.PadLow))
			conds = append(conds, f.Less(s[d], k.ic(source.Shape.Dims[d])),
				f.LessEqual(start, at[d]))
		}
		sel := g.selectInWindow(in, x, s)
		for d := range sel {
			conds = append(conds, f.Equal(sel[d], idx[d]))
		}
		return conds
	}
	return g.fold(scatterC, init, product(counts), cond, func(spirv.ID) []spirv.ID {
		return []spirv.ID{g.emit(source, s)}
	})[0]
}

// selectInWindow returns the operand index that window s selects (-1 in every dim
// when the window holds no operand element).
func (g *gen) selectInWindow(in, x *hlo.Instruction, s []spirv.ID) []spirv.ID {
	k, f, m := g.k, g.k.f, g.k.m
	w := in.Attrs.Window
	dt := x.Shape.DType
	has := k.variable(m.TypeBool(), m.ConstBool(false), "has_selected")
	val := k.variable(k.regType(dt), k.zero(dt), "selected")
	pos := make([]spirv.ID, len(w))
	for d := range pos {
		pos[d] = k.variable(k.idxT, k.ic(-1), "selected_index")
	}
	g.loop(product(windowSizes(w)), func(j spirv.ID) {
		p, conds := k.windowSource(w, x.Shape.Dims, s, k.delinearize(j, windowSizes(w)))
		f.If(k.all(conds...), func() {
			g.scoped(func() {
				v := g.emit(x, p)
				keep := g.call(in.Called[0], []spirv.ID{f.Load(val), v})[0]
				take := f.LogicalOr(f.LogicalNot(f.Load(has)), f.LogicalNot(keep))
				f.If(take, func() {
					f.Store(has, m.ConstBool(true))
					f.Store(val, v)
					for d := range pos {
						f.Store(pos[d], p[d])
					}
				}, nil)
			})
		}, nil)
	})
	out := make([]spirv.ID, len(pos))
	for d := range pos {
		out[d] = f.Load(pos[d])
	}
	return out
}
