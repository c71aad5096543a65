package codegen

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Quantised weights. A dot whose B is a dequantised weight (fusion's operand
// chain, passes/fusion_operand_convert.go: convert(w) of an s4, u4, s8, u8,
// 8-bit float or f4e2m1fn input, optionally times a scale, optionally widened
// f16 → f32) reads w through a u32 view of its binding: one 32-bit load holds 8
// s4 (4 s8) elements of a row of B (w stored K×N, x·W) or of a column (N×K,
// x·Wᵀ), unpacked by shift, mask and sign extension in registers. The unpacked
// elements are handed to the elemental emitter as the parameter's values at
// their indices (gen.define), so the convert, the multiply and their rounding are
// the emitter's own, exactly as in the element-by-element path. A scale that is
// the same for a group of g consecutive k (per output channel: g = K; per group:
// a broadcast over a [K/g, g] split of K, reshaped back) is read once per group
// (gemmLoad.group), not per element: the k loop runs over groups, then quads.

// quantB is a GEMM view's B read as a quantised weight.
type quantB struct {
	w     *hlo.Instruction // the stored weight: a kernel parameter
	param int
	bits  int64            // per element
	scale *hlo.Instruction // the multiply's other operand, or nil
	group int64            // k per scale group (0: the scale is read per element)
	// word loads u32 word i of the weight: a texel fetch where the target allows
	// one (a fraction of a storage-buffer load's cost on llvmpipe, docs/codegen.md
	// "Texel reads"), else a load from the u32 view of its binding.
	word func(i spirv.ID) spirv.ID
	// words4, when set, fetches words 4i … 4i+3 at once (an RGBA32 texel):
	// quantElems takes runs of 128 bits starting on a multiple of 4 words
	// through it.
	words4 func(i spirv.ID) spirv.ID
}

// quantView says whether B (gs.rhs, of rank 2, no batch) is a dequantised
// weight: rhs = [convert f16→f32] ∘ [multiply by a scale] ∘ convert(w).
func quantView(gs gemmShape) (quantB, bool) {
	if gs.rhs.Shape.Rank() != 2 || len(gs.batch) != 0 {
		return quantB{}, false
	}
	q, ok := quantChain(gs.rhs)
	if ok && q.scale != nil {
		q.group = scaleGroup(q.scale, gs.d.RhsContracting[0])
	}
	return q, ok
}

// quantChain says whether x is a dequantised kernel input: [convert f16→f32] ∘
// [multiply by a scale] ∘ convert(w); q has no scale group yet.
func quantChain(x *hlo.Instruction) (quantB, bool) {
	if x.Op == hlo.OpConvert && isNarrowFloat(x.Operands[0].Shape.DType) {
		x = x.Operands[0]
	}
	var q quantB
	if x.Op == hlo.OpMultiply {
		i := slices.IndexFunc(x.Operands, isQuantConvert)
		if i < 0 {
			return quantB{}, false
		}
		q.scale = x.Operands[1-i]
		x = x.Operands[i]
	}
	if !isQuantConvert(x) {
		return quantB{}, false
	}
	q.w = x.Operands[0]
	q.param, q.bits = int(q.w.Attrs.ParameterNumber), int64(q.w.Shape.DType.StorageBits())
	return q, true
}

// isQuantConvert: a convert of a kernel input of a quantised type (stored in 4
// or 8 bits) to f32 or f16.
func isQuantConvert(x *hlo.Instruction) bool {
	if x.Op != hlo.OpConvert || (x.Shape.DType != hlo.F32 && x.Shape.DType != hlo.F16) || x.Operands[0].Op != hlo.OpParameter {
		return false
	}
	dt := x.Operands[0].Shape.DType
	switch {
	case dt == hlo.S4, dt == hlo.U4, dt == hlo.F4E2M1FN, dt == hlo.S8, dt == hlo.U8:
		return true
	}
	return isF8(dt)
}

// scaleGroup is how many consecutive k (along dim kDim of s) share one value of
// s, when that is a multiple of 4 that the structure shows (a broadcast that
// does not map kDim: all of it; a reshape that merges [K/g, g] into kDim of a
// broadcast that does not map the g dim: g), else 0.
func scaleGroup(s *hlo.Instruction, kDim int64) int64 {
	if s.Op == hlo.OpConvert && isNarrowFloat(s.Operands[0].Shape.DType) {
		s = s.Operands[0]
	}
	g := int64(0)
	switch s.Op {
	case hlo.OpBroadcast:
		if !slices.Contains(s.Attrs.Dimensions, kDim) {
			g = s.Shape.Dims[kDim]
		}
	case hlo.OpReshape:
		b, in, out := s.Operands[0], s.Operands[0].Shape.Dims, s.Shape.Dims
		split := len(in) == len(out)+1 && in[kDim]*in[kDim+1] == out[kDim] &&
			slices.Equal(in[:kDim], out[:kDim]) && slices.Equal(in[kDim+2:], out[kDim+1:])
		if split && b.Op == hlo.OpBroadcast && !slices.Contains(b.Attrs.Dimensions, kDim+1) {
			g = in[kDim+1]
		}
	}
	if g%4 != 0 {
		return 0
	}
	return g
}

// quantWords is the u32 view of input n's binding, declared once per kernel.
func (k *kernel) quantWords(n int) spirv.Buffer {
	key := -1 - n // beside the vec4 aliases, by input
	if buf, ok := k.vec4s[key]; ok {
		return buf
	}
	buf := k.view(n, fmt.Sprintf("in%d_u32", n), k.m.TypeU32())
	k.vec4s[key] = buf
	return buf
}

// quantElems reads count elements of the weight from element e on (a linear
// index, its bit offset e·bits a multiple of 32 or the elements inside one
// word): one u32 load per 32 bits, each element's register value (as the
// parameter's load would give it) cut out of its word.
func (k *kernel) quantElems(q quantB, e spirv.ID, count int64) []spirv.ID {
	f := k.f
	bitAt := f.IMul(e, k.ic(q.bits))
	// Indices are non-negative: shifts and masks, not signed division.
	w0 := f.ShrA(bitAt, k.ic(5))
	loaded := map[int64]spirv.ID{}
	word := func(wi int64) spirv.ID {
		if loaded[wi] == 0 {
			loaded[wi] = q.word(f.IAdd(w0, k.ic(wi)))
		}
		return loaded[wi]
	}
	out := make([]spirv.ID, count)
	if count*q.bits < 32 { // inside one word, at a bit offset known at run time
		shift0 := f.Bitcast(k.m.TypeU32(), f.And(bitAt, k.ic(31)))
		for j := range count {
			sh := f.IAdd(shift0, k.u32(uint32(j*q.bits)))
			out[j] = k.quantReg(f.And(f.ShrL(word(0), sh), k.u32(uint32(1)<<q.bits-1)), q.w.Shape.DType)
		}
		return out
	}
	if q.words4 != nil && (count*q.bits)%128 == 0 {
		t0 := f.ShrA(bitAt, k.ic(7))
		var texel spirv.ID
		for wi := range count * q.bits / 32 {
			if wi%4 == 0 {
				texel = q.words4(f.IAdd(t0, k.ic(wi/4)))
			}
			loaded[wi] = f.CompositeExtract(texel, uint32(wi%4))
		}
	}
	for j := range count {
		bit := j * q.bits
		out[j] = k.unpackQuant(word(bit/32), bit%32, q.w.Shape.DType)
	}
	return out
}

// unpackQuant is the register value of the dt element at bit (a constant) of a
// word, in as few instructions as its place allows: a signed nibble by a shift
// up and an arithmetic shift down (one shift for the top one), the others by a
// shift and a mask, dropping the mask for the top element and for 8-bit
// integers (their conversion to 8 bits truncates), the shift for the bottom one.
func (k *kernel) unpackQuant(word spirv.ID, bit int64, dt hlo.DType) spirv.ID {
	f, w := k.f, int64(dt.StorageBits())
	if isNibble(dt) && !dt.IsUnsigned() {
		v := f.Bitcast(k.m.TypeI32(), word)
		if up := 32 - w - bit; up > 0 {
			v = f.Bitcast(k.m.TypeI32(), f.Shl(word, k.u32(uint32(up))))
		}
		return f.ShrA(v, k.u32(uint32(32-w)))
	}
	v := word
	if bit > 0 {
		v = f.ShrL(v, k.u32(uint32(bit)))
	}
	if bit+w < 32 && dt != hlo.S8 && dt != hlo.U8 {
		v = f.And(v, k.u32(uint32(1)<<w-1))
	}
	return k.quantReg(v, dt)
}

// quantReg is an element's register value from its bits (a u32).
func (k *kernel) quantReg(v spirv.ID, dt hlo.DType) spirv.ID {
	switch dt {
	case hlo.U8:
		return k.f.Convert(k.m.TypeInt(8, false), v)
	case hlo.S8:
		return k.f.Bitcast(k.m.TypeInt(8, true), k.f.Convert(k.m.TypeInt(8, false), v))
	}
	return k.fromNibble(v, dt)
}

// quantWordReader reads u32 word i of input n: a texel fetch where the target
// allows one (never for an input written in place), else a load from its u32
// view.
func (l *lowering) quantWordReader(k *kernel, n int) func(i spirv.ID) spirv.ID {
	if !l.writtenInPlace(n) {
		if t, ok := k.texelViewOf(n, hlo.U32, TexelR32U); ok {
			return func(i spirv.ID) spirv.ID { return k.f.CompositeExtract(k.fetch(t, i), 0) }
		}
	}
	return func(i spirv.ID) spirv.ID { return k.f.LoadElem(k.quantWords(n), i) }
}

// quantRowOK: B stored K×N (N minor) reads a block's rn columns at one k in
// whole words (or within one): rows start on a word, and the block never
// passes N.
func quantRowOK(gs gemmShape, q quantB, rn int64) bool {
	bits := rn * q.bits
	return gs.rFree == 1 && (gs.n*q.bits)%32 == 0 && gs.n%rn == 0 && (bits%32 == 0 || 32%bits == 0)
}

// quantColumnOK: B stored N×K (K minor) reads 4 k of a column inside one word.
func quantColumnOK(gs gemmShape, q quantB) bool {
	return gs.d.RhsContracting[0] == 1 && (gs.k*q.bits)%32 == 0 && 32%(4*q.bits) == 0
}

// quantLoaders sets ld's B loaders (and its scale groups) for a quantised B.
func (l *lowering) quantLoaders(g *gen, gs gemmShape, q quantB, ld *gemmLoad, col0 spirv.ID, rn int64) {
	k, f := g.k, g.k.f
	cols := make([]spirv.ID, rn)
	for j := range cols {
		cols[j] = k.clampHigh(f.IAdd(col0, k.ic(int64(j))), gs.n-1)
	}
	var scales []spirv.ID // per column, the current group's scale (while set)
	// value is B at (kv, column j), w's element there being wv.
	value := func(kv spirv.ID, j int, wv spirv.ID) spirv.ID {
		idx := gs.rhsIndex(nil, kv, cols[j])
		g.define(q.w, idx, []spirv.ID{wv})
		if scales != nil {
			g.define(q.scale, idx, []spirv.ID{scales[j]})
		}
		return g.emit(gs.rhs, idx)
	}
	quad := func(vals []spirv.ID) spirv.ID {
		return f.CompositeConstruct(k.m.TypeVector(k.m.TypeF32(), 4), vals...)
	}
	switch {
	case quantRowOK(gs, q, rn):
		ld.bQuad = nil
		ld.bRow = func(kv spirv.ID) []spirv.ID {
			ws := k.quantElems(q, f.IAdd(f.IMul(kv, k.ic(gs.n)), col0), rn)
			out := make([]spirv.ID, rn/4)
			for c := range out {
				vals := make([]spirv.ID, 4)
				for j := range vals {
					vals[j] = value(kv, 4*c+j, ws[4*c+j])
				}
				out[c] = quad(vals)
			}
			return out
		}
	case quantColumnOK(gs, q):
		if 8*q.bits == 32 { // a column's word holds 8 k: read each once
			ld.bOctet = func(ko spirv.ID) [8][]spirv.ID {
				var out [8][]spirv.ID
				copy(out[:], columnKs(k, gs, q, cols, ko, 8, value))
				return out
			}
		}
		ld.bQuad = func(kk spirv.ID) [4][]spirv.ID {
			var out [4][]spirv.ID
			copy(out[:], columnKs(k, gs, q, cols, kk, 4, value))
			return out
		}
	default:
		return
	}
	// The loaders above read words through q.word, set here (before they run).
	q.word = l.quantWordReader(k, q.param)
	if quantRowOK(gs, q, rn) && (gs.n*q.bits)%128 == 0 && (rn*q.bits)%128 == 0 && !l.writtenInPlace(q.param) {
		if t, ok := k.texelViewOf(q.param, hlo.U32, TexelRGBA32U); ok {
			q.words4 = func(i spirv.ID) spirv.ID { return k.fetch(t, i) }
		}
	}
	if q.group > 0 && gs.k%q.group == 0 {
		ld.group = q.group
		ld.beginGroup = func(k0 spirv.ID) {
			scales = make([]spirv.ID, rn)
			for j := range scales {
				scales[j] = g.emit(q.scale, gs.rhsIndex(nil, k0, cols[j]))
			}
		}
		ld.endGroup = func() { scales = nil }
	}
}

// columnKs is B's rows at k = span·kk … span·kk+span−1 (span 4 or 8: inside one
// word of each column of w stored N×K) as column quads: per k, per quad of the
// block's columns, a vec4.
func columnKs(k *kernel, gs gemmShape, q quantB, cols []spirv.ID, kk spirv.ID, span int64, value func(kv spirv.ID, j int, wv spirv.ID) spirv.ID) [][]spirv.ID {
	f := k.f
	k0 := f.IMul(kk, k.ic(span))
	vals := make([][]spirv.ID, len(cols)) // per column, its span k
	for j := range cols {
		ws := k.quantElems(q, f.IAdd(f.IMul(cols[j], k.ic(gs.k)), k0), span)
		for u := range ws {
			vals[j] = append(vals[j], value(f.IAdd(k0, k.ic(int64(u))), j, ws[u]))
		}
	}
	vec4 := k.m.TypeVector(k.m.TypeF32(), 4)
	out := make([][]spirv.ID, span)
	for u := range out {
		for c := 0; c+4 <= len(cols); c += 4 {
			out[u] = append(out[u], f.CompositeConstruct(vec4, vals[c][u], vals[c+1][u], vals[c+2][u], vals[c+3][u]))
		}
	}
	return out
}
