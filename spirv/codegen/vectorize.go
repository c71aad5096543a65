package codegen

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Four elements per invocation. A streaming kernel (elementwise ops and data
// movement only) whose output's minor dimension is a multiple of 4 computes four
// consecutive output elements per loop iteration: the element expressions are
// emitted four times, but every input read at the output's own linear index (the
// common case: operands of the output's dims, or reshaped to them) becomes one vec4
// load per group, and 32-bit outputs are written with one vec4 store. Fewer, wider
// memory operations and a quarter of the loop overhead are what made the
// hand-written vec4 saxpy 2-4x faster than the scalar one on lavapipe.

// lane locates an element inside a vec4 group.
type lane struct {
	group spirv.ID // index of the vec4
	u     uint32   // component
}

// vectorizable reports a kernel computation of cheap elementwise and movement ops
// with an output whose minor dimension is a multiple of 4.
func vectorizable(c *hlo.Computation, dims []int64) bool {
	if len(dims) == 0 || dims[len(dims)-1]%4 != 0 {
		return false
	}
	for _, in := range c.Instructions {
		switch in.Info().Kind {
		case hlo.KindLeaf, hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise, hlo.KindMovement, hlo.KindTuple:
		default:
			return false
		}
		if hasComplex(in) { // vec4 views are of scalar elements; c64 is a vec2
			return false
		}
		if in.Op == hlo.OpScatter || in.Op == hlo.OpPower || in.Op == hlo.OpRemainder {
			return false // loops per element: no gain from unrolling them four times
		}
	}
	return true
}

// is32 reports dtypes stored as 32-bit words (a vec4 of them is 16 bytes).
func is32(dt hlo.DType) bool { return dt == hlo.F32 || dt == hlo.S32 || dt == hlo.U32 }

// vec4Type is the vec4 of a dtype's storage type.
func (k *kernel) vec4Type(dt hlo.DType) spirv.ID { return k.m.TypeVector(k.storeType(dt), 4) }

// vecLoad reads the element at linear index lin of input n from a vec4 read of its
// group, when lin is one of the elements of the current vec4 group: a texel fetch
// for a float input the kernel does not write in place, where the target allows
// (texel.go; f16 and bf16 widened, so the value is the register form), else a vec4
// load for 32-bit types.
func (k *kernel) vecLoad(g *gen, n int, lin spirv.ID, dt hlo.DType, inPlace bool) (spirv.ID, bool) {
	ln, ok := k.lanes[lin]
	if !ok {
		return 0, false
	}
	// One read per group and input, shared by its four elements (cached like any
	// emitted value, so a read inside a branch is not reused outside it).
	key := fmt.Sprint("vec4 ", n, " ", ln.group)
	if !inPlace {
		if t, ok := k.texelInput(n, dt); ok { // f32, f16 and bf16
			vec := g.memo(key, func() spirv.ID { return k.fetchVec4(t, ln.group) })
			return k.f.CompositeExtract(vec, ln.u), true
		}
	}
	if !is32(dt) {
		return 0, false
	}
	buf := k.vec4Input(n, dt)
	vec := g.memo(key, func() spirv.ID { return k.f.LoadElem(buf, ln.group) })
	return k.f.CompositeExtract(vec, ln.u), true
}

// laneIndex is the multi-index in dims of element lin = 4·group + u of a vec4
// group (ln), made so that the group's lanes share every index id they can: the
// leading dimensions' ids are made once per group (once per pair of lanes when the
// minor extent is 2), and the minor index is the constant u when the minor extent
// is 4. Lanes that read one element of an operand then read it at the same ids,
// and the emitter's cache computes it once: rng-bit-generator's Philox words,
// interleaved through a concatenation of [blocks, 4] (or [blocks, 2] of u64),
// cost one block per group instead of one per lane, and a concatenation read at a
// constant index takes its operand without branching (emitConcatenate). ok is
// false when the minor extent is neither a multiple of 4 nor 2.
func (g *gen) laneIndex(ln lane, lin spirv.ID, dims []int64) (idx []spirv.ID, ok bool) {
	k, f := g.k, g.k.f
	r := len(dims) - 1
	if r < 0 {
		return nil, false
	}
	if r == 0 {
		return []spirv.ID{lin}, dims[0]%4 == 0
	}
	var row, minor spirv.ID // the linear index over dims[:r], and the minor index
	switch m := dims[r]; {
	case m == 4:
		row, minor = ln.group, k.ic(int64(ln.u))
	case m%4 == 0:
		per := k.ic(m / 4) // groups per row
		row = g.memo(fmt.Sprint("lane row ", ln.group, m), func() spirv.ID { return f.SDiv(ln.group, per) })
		first := g.memo(fmt.Sprint("lane col ", ln.group, m), func() spirv.ID { return f.IMul(f.SRem(ln.group, per), k.ic(4)) })
		minor = f.IAdd(first, k.ic(int64(ln.u)))
	case m == 2:
		half := int64(ln.u / 2)
		row = g.memo(fmt.Sprint("lane pair ", ln.group, half), func() spirv.ID { return f.IAdd(f.IMul(ln.group, k.ic(2)), k.ic(half)) })
		minor = k.ic(int64(ln.u % 2))
	default:
		return nil, false
	}
	lead := g.memoN(fmt.Sprint("lane lead ", row, dims[:r]), func() []spirv.ID { return k.delinearize(row, dims[:r]) })
	idx = append(slices.Clone(lead), minor)
	k.linear[fmt.Sprint(idx, dims)] = lin
	return idx, true
}

// elementalVec4 emits the output loop over vec4 groups and returns the grid.
func (l *lowering) elementalVec4(k *kernel, g *gen, outs []spirv.Buffer, dims []int64) [3]uint32 {
	f := k.f
	groups := product(dims) / 4
	outVec := make([]spirv.Buffer, len(outs))
	for j, s := range l.p.Outputs {
		if is32(s.DType) {
			outVec[j] = k.view(len(l.p.Inputs)+j, fmt.Sprintf("out%d_vec4", j), k.vec4Type(s.DType))
		}
	}
	return k.gridStride(groups, func(q spirv.ID) {
		g.scoped(func() {
			base := f.IMul(q, k.ic(4))
			vals := make([][]spirv.ID, len(outs)) // per output, the four values
			for u := range int64(4) {
				lin := f.IAdd(base, k.ic(u))
				ln := lane{group: q, u: uint32(u)}
				k.lanes[lin] = ln
				idx, _ := g.laneIndex(ln, lin, dims) // the minor extent is a multiple of 4
				for j, v := range g.emitN(l.c.Root, idx) {
					if outVec[j].Var == 0 {
						k.store(outs[j], lin, v, l.p.Outputs[j].DType)
						continue
					}
					vals[j] = append(vals[j], k.toStore(v, l.p.Outputs[j].DType))
				}
			}
			for j, vs := range vals {
				if outVec[j].Var != 0 {
					f.StoreElem(outVec[j], q, f.CompositeConstruct(k.vec4Type(l.p.Outputs[j].DType), vs...))
				}
			}
		})
	})
}
