package codegen

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Data movement is index arithmetic: each op maps an output index to the operand
// index it reads (or to a padding value, under a branch that only reads the operand
// when the index is inside it).

func emitIota(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k := g.k
	dt := in.Shape.DType
	v := idx[in.Attrs.IotaDimension]
	if dt.IsFloat() {
		return k.round(k.f.Convert(k.regType(dt), v), dt)
	}
	return k.f.Convert(k.regType(dt), v)
}

// emitBroadcast: operand dimension i is output dimension Dimensions[i].
func emitBroadcast(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	src := make([]spirv.ID, len(in.Attrs.Dimensions))
	for i, d := range in.Attrs.Dimensions {
		src[i] = idx[d]
	}
	return g.emit(in.Operands[0], src)
}

// emitReshape goes through the row-major linear index (which both shapes share),
// except for dims that a pure insertion or removal of unit dims leaves alone.
func emitReshape(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	x := in.Operands[0]
	if src, ok := unitReshape(g.k, x.Shape.Dims, in.Shape.Dims, idx); ok {
		return g.emit(x, src)
	}
	lin := g.k.linearize(idx, in.Shape.Dims)
	if ln, ok := g.k.lanes[lin]; ok {
		if src, ok := g.laneIndex(ln, lin, x.Shape.Dims); ok {
			return g.emit(x, src)
		}
	}
	return g.emit(x, g.k.delinearize(lin, x.Shape.Dims))
}

// unitReshape maps the index directly when the two dims differ only by unit dims.
func unitReshape(k *kernel, from, to []int64, idx []spirv.ID) ([]spirv.ID, bool) {
	var src []spirv.ID
	j := 0
	for _, d := range from {
		if d == 1 {
			src = append(src, k.ic(0))
			continue
		}
		for j < len(to) && to[j] == 1 {
			j++
		}
		if j == len(to) || to[j] != d {
			return nil, false
		}
		src = append(src, idx[j])
		j++
	}
	for ; j < len(to); j++ {
		if to[j] != 1 {
			return nil, false
		}
	}
	return src, true
}

// emitTranspose: output dimension i is operand dimension perm[i].
func emitTranspose(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	src := make([]spirv.ID, len(idx))
	for i, p := range in.Attrs.Dimensions {
		src[p] = idx[i]
	}
	return g.emit(in.Operands[0], src)
}

func emitSlice(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k := g.k
	src := make([]spirv.ID, len(idx))
	for i, s := range in.Attrs.Slice {
		v := idx[i]
		if s.Stride != 1 {
			v = k.f.IMul(v, k.ic(s.Stride))
		}
		if s.Start != 0 {
			v = k.f.IAdd(v, k.ic(s.Start))
		}
		src[i] = v
	}
	return g.emit(in.Operands[0], src)
}

// emitCopy: a copy's element is its operand's (layouts are all row-major).
func emitCopy(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	return g.emit(in.Operands[0], idx)
}

func emitReverse(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k := g.k
	src := append([]spirv.ID{}, idx...)
	for _, d := range in.Attrs.Dimensions {
		src[d] = k.f.ISub(k.ic(in.Shape.Dims[d]-1), idx[d])
	}
	return g.emit(in.Operands[0], src)
}

// emitConcatenate picks the operand whose range along the dimension holds the
// index, through a chain of branches (the last operand needs no test).
func emitConcatenate(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	dim := in.Attrs.Dimensions[0]
	if at, ok := g.k.constIndex(idx[dim]); ok {
		return emitConcatenateAt(g, in, idx, at)
	}
	t := g.k.regType(in.Shape.DType)
	var from func(i int, offset int64) spirv.ID
	from = func(i int, offset int64) spirv.ID {
		x := in.Operands[i]
		at := func() spirv.ID {
			src := append([]spirv.ID{}, idx...)
			if offset != 0 {
				src[dim] = g.k.f.ISub(idx[dim], g.k.ic(offset))
			}
			return g.emit(x, src)
		}
		end := offset + x.Shape.Dims[dim]
		if i == len(in.Operands)-1 {
			return at()
		}
		if x.Shape.Dims[dim] == 0 {
			return from(i+1, end)
		}
		return g.ifValue(t, g.k.f.Less(idx[dim], g.k.ic(end)), at, func() spirv.ID { return from(i+1, end) })
	}
	return from(0, 0)
}

// emitConcatenateAt reads the operand that holds index at (a constant) of the
// concatenated dimension, with no branch.
func emitConcatenateAt(g *gen, in *hlo.Instruction, idx []spirv.ID, at int64) spirv.ID {
	dim := in.Attrs.Dimensions[0]
	for _, x := range in.Operands {
		if at < x.Shape.Dims[dim] {
			src := slices.Clone(idx)
			src[dim] = g.k.ic(at)
			return g.emit(x, src)
		}
		at -= x.Shape.Dims[dim]
	}
	g.fail(in, "internal: index %d beyond the concatenated dimension", at)
	return 0
}

// emitPad: output position p of a dimension is operand element (p-low)/(interior+1)
// when that divides exactly and lands inside the operand; otherwise the padding value.
func emitPad(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	x := in.Operands[0]
	src := make([]spirv.ID, len(idx))
	var conds []spirv.ID
	for i, p := range in.Attrs.Padding {
		v := idx[i]
		if p.Low != 0 {
			v = f.ISub(v, k.ic(p.Low))
		}
		// Range test on the dilated extent, then the stride test; dilated positions
		// are non-negative once in range, so the remainder is well defined.
		size, ext := x.Shape.Dims[i], int64(0)
		if size > 0 {
			ext = (size-1)*(p.Interior+1) + 1
		}
		// Without positive low or high padding every position is inside.
		if p.Low > 0 || p.High > 0 || size == 0 {
			conds = append(conds, k.inRange(v, k.ic(0), k.ic(ext)))
		}
		if p.Interior > 0 {
			step := k.ic(p.Interior + 1)
			conds = append(conds, f.Equal(f.SRem(v, step), k.ic(0)))
			v = f.SDiv(v, step)
		}
		src[i] = v
	}
	if len(conds) == 0 {
		return g.emit(x, src)
	}
	t := k.regType(in.Shape.DType)
	return g.ifValue(t, k.all(conds...), func() spirv.ID { return g.emit(x, src) },
		func() spirv.ID { return g.emit(in.Operands[1], scalarIndex) })
}

// startIndices reads dynamic start indices (scalar operands) and clamps each to
// [0, dim-size] so the slice stays inside the operand, as XLA does.
func (g *gen) startIndices(starts []*hlo.Instruction, dims, sizes []int64) []spirv.ID {
	k := g.k
	out := make([]spirv.ID, len(starts))
	for i, s := range starts {
		out[i] = k.clampToIndex(g.emit(s, scalarIndex), s.Shape.DType, dims[i]-sizes[i])
	}
	return out
}

// clampToIndex clamps an integer register value of type dt to [0, hi] in its own
// type (so that a huge or negative index of any width clamps correctly) and
// converts it to the index type.
func (k *kernel) clampToIndex(v spirv.ID, dt hlo.DType, hi int64) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(v)
	if dt.IsSigned() {
		v = f.Select(f.Less(v, m.ConstOf(t, 0)), m.ConstOf(t, 0), v)
	}
	maxOf := uint64(1)<<(dt.Bits()-1) - 1
	if dt.IsUnsigned() {
		maxOf = maxOf<<1 | 1
	}
	if uint64(hi) < maxOf {
		h := m.ConstUint(t, uint64(hi))
		v = f.Select(f.Greater(v, h), h, v)
	}
	return k.toIndex(v)
}

func emitDynamicSlice(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	x := in.Operands[0]
	starts := g.startIndices(in.Operands[1:], x.Shape.Dims, in.Shape.Dims)
	src := make([]spirv.ID, len(idx))
	for i := range idx {
		src[i] = g.k.f.IAdd(idx[i], starts[i])
	}
	return g.emit(x, src)
}

// emitDynamicUpdateSlice reads the update inside the (clamped) window and the
// operand elsewhere.
func emitDynamicUpdateSlice(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	x, u := in.Operands[0], in.Operands[1]
	starts := g.startIndices(in.Operands[2:], x.Shape.Dims, u.Shape.Dims)
	src := make([]spirv.ID, len(idx))
	conds := make([]spirv.ID, len(idx))
	for i := range idx {
		src[i] = f.ISub(idx[i], starts[i])
		conds[i] = k.inRange(src[i], k.ic(0), k.ic(u.Shape.Dims[i]))
	}
	t := k.regType(in.Shape.DType)
	return g.ifValue(t, k.all(conds...), func() spirv.ID { return g.emit(u, src) },
		func() spirv.ID { return g.emit(x, idx) })
}
