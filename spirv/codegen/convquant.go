package codegen

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Quantised filters. A convolution whose filter is a dequantised weight (fusion's
// filter chain, passes/fusion_operand_convert.go: [convert f16→f32] ∘ [multiply
// by a scale] ∘ convert(w), w s4, u4, s8, u8, an 8-bit float or f4e2m1fn) is
// read by the implicit GEMM as packed 32-bit words, as a dot's quantised B is
// (gemm_quant.go), where the filter's rows start on a word:
//   - output features minor (HWIO): B's row at (tap, input feature) is the
//     block's rn output features, contiguous: rn·bits bits in one or more words
//     (every row starts on a word when O·bits is a multiple of 32 and the
//     group's columns are whole blocks);
//   - input features minor (OHWI): a column's 4 k (input features) at a tap
//     lie in one word (kIn·bits a multiple of 32), and 8 k of s4 in one word,
//     read once (gemmLoad.bOctet).
// A scale that varies over output features only (a broadcast mapping only the
// filter's output-feature dim: per output channel) is read once per tap and
// column; any other scale is read through the emitter per element. Elsewhere
// (odd channel counts: rows that start mid-byte) the filter is read element by
// element through the emitter, which loads the packed bytes itself.

// convQuantView is the quantised view of cg's filter, if it is a dequantised
// input.
func convQuantView(cg convGEMM) (quantB, bool) {
	if cg.byBatch {
		return quantB{}, false
	}
	return quantChain(cg.rhs)
}

// channelScale says whether scale s (a kernel input seen through a broadcast
// and a widening f16 → f32 convert) varies over dim out only.
func channelScale(s *hlo.Instruction, out int64) bool {
	if s.Op == hlo.OpConvert && isNarrowFloat(s.Operands[0].Shape.DType) {
		s = s.Operands[0]
	}
	return s.Op == hlo.OpBroadcast && s.Operands[0].Op == hlo.OpParameter &&
		(len(s.Attrs.Dimensions) == 0 || slices.Equal(s.Attrs.Dimensions, []int64{out}))
}

// convQuantRowOK: with output features minor, every row of the block starts on
// a word and the block's rn columns fill words (or lie inside one), never
// passing the group's n.
func convQuantRowOK(cg convGEMM, q quantB, rn int64) bool {
	o, bits := cg.rhs.Shape.Dims[cg.cd.KernelOutput], rn*q.bits
	return cg.cd.KernelOutput == int64(cg.rhs.Shape.Rank()-1) && (o*q.bits)%32 == 0 && (cg.n*q.bits)%32 == 0 &&
		cg.n%rn == 0 && (bits%32 == 0 || 32%bits == 0)
}

// convQuantColumnOK: with input features minor, a column's 4 k lie in one word.
func convQuantColumnOK(cg convGEMM, q quantB) bool {
	return cg.cd.KernelInput == int64(cg.rhs.Shape.Rank()-1) && (cg.kIn*q.bits)%32 == 0 && 32%(4*q.bits) == 0
}

// convQuantBLoaders sets B's loaders of one tap (window position pos) for a
// quantised filter read as packed words, and says whether it did.
func (l *lowering) convQuantBLoaders(t gemmTile, cg convGEMM, group spirv.ID, pos []spirv.ID, ld *gemmLoad) bool {
	q, ok := convQuantView(cg)
	rowOK, columnOK := ok && convQuantRowOK(cg, q, t.rn), ok && convQuantColumnOK(cg, q)
	if !rowOK && !columnOK {
		return false
	}
	g, k, f := t.g, t.g.k, t.g.k.f
	dims := cg.rhs.Shape.Dims
	colBase := f.IMul(group, k.ic(cg.n))
	cols := make([]spirv.ID, t.rn) // the block's output features
	for j := range cols {
		cols[j] = f.IAdd(colBase, k.clampHigh(f.IAdd(t.col0, k.ic(int64(j))), cg.n-1))
	}
	var scales []spirv.ID
	if q.scale != nil && channelScale(q.scale, cg.cd.KernelOutput) {
		scales = make([]spirv.ID, t.rn)
		for j := range scales {
			scales[j] = g.emit(q.scale, cg.filterIndex(k, k.ic(0), cols[j], pos))
		}
	}
	// value is B at (kv, column j), w's element there being wv.
	value := func(kv spirv.ID, j int, wv spirv.ID) spirv.ID {
		idx := cg.filterIndex(k, kv, cols[j], pos)
		g.define(q.w, idx, []spirv.ID{wv})
		if scales != nil {
			g.define(q.scale, idx, []spirv.ID{scales[j]})
		}
		return g.emit(cg.rhs, idx)
	}
	q.word = l.quantWordReader(k, q.param)
	if rowOK {
		ld.bRow = func(kv spirv.ID) []spirv.ID {
			ws := k.quantElems(q, k.linearize(cg.filterIndex(k, kv, cols[0], pos), dims), t.rn)
			vals := make([]spirv.ID, t.rn)
			for j := range vals {
				vals[j] = value(kv, j, ws[j])
			}
			return columnVec4s(k, vals)
		}
		return true
	}
	// The k (input features) of column j from kv on, span of them in one word.
	column := func(kv spirv.ID, j int, span int64) []spirv.ID {
		ws := k.quantElems(q, k.linearize(cg.filterIndex(k, kv, cols[j], pos), dims), span)
		for u := range ws {
			ws[u] = value(f.IAdd(kv, k.ic(int64(u))), j, ws[u])
		}
		return ws
	}
	rows := func(kk spirv.ID, span int64) [][]spirv.ID { // per k, B's row as column quads
		k0 := f.IMul(kk, k.ic(span))
		perCol := make([][]spirv.ID, len(cols))
		for j := range cols {
			perCol[j] = column(k0, j, span)
		}
		out := make([][]spirv.ID, span)
		for u := range out {
			row := make([]spirv.ID, len(cols))
			for j := range cols {
				row[j] = perCol[j][u]
			}
			out[u] = columnVec4s(k, row)
		}
		return out
	}
	ld.bQuad = func(kk spirv.ID) [4][]spirv.ID { return [4][]spirv.ID(rows(kk, 4)) }
	if 8*q.bits == 32 && cg.kIn%8 == 0 {
		ld.bOctet = func(ko spirv.ID) [8][]spirv.ID { return [8][]spirv.ID(rows(ko, 8)) }
	}
	return true
}

// columnVec4s groups a row's values (a multiple of 4) into vec4s of 4 columns.
func columnVec4s(k *kernel, vals []spirv.ID) []spirv.ID {
	vec4 := k.m.TypeVector(k.m.TypeF32(), 4)
	out := make([]spirv.ID, len(vals)/4)
	for c := range out {
		out[c] = k.f.CompositeConstruct(vec4, vals[4*c:4*c+4]...)
	}
	return out
}
