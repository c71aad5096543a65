package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Contractions (dot, convolution) multiply-accumulate in an accumulation type chosen
// by the result type:
//   - f32, f16, bf16 results accumulate in float32, every product and every sum
//     rounded to float32 (no fused multiply-add); f16/bf16 round once at the end, as
//     XLA's CPU backend accumulates half types in f32;
//   - f64 results accumulate in float64;
//   - integer results accumulate with wrap-around in the result's width;
//   - pred results are the OR of ANDs.
//
// Operand elements are converted to the accumulation type first (exactly, for the
// usual same-type or widening cases such as s8×s8→s32 or bf16×bf16→f32).

type accKind uint8

const (
	accF32 accKind = iota
	accF64
	accInt
)

// macOperands holds both operands decoded into the accumulation type.
type macOperands struct {
	kind     accKind
	out      hlo.DType
	l32, r32 []float32
	l64, r64 []float64
	li, ri   []int64
}

// accumulator is one running sum; only the field of the kind in use is read.
type accumulator struct {
	f32 float32
	f64 float64
	i   int64
}

func newMacOperands(out hlo.DType, lhs, rhs *hlo.Literal) (*macOperands, error) {
	if !out.IsValid() || !lhs.DType().IsValid() || !rhs.DType().IsValid() {
		return nil, fmt.Errorf("contraction of %v and %v into %v", lhs.Shape(), rhs.Shape(), out)
	}
	m := &macOperands{out: out}
	switch {
	case out == hlo.F64:
		m.kind = accF64
		m.l64, m.r64 = decodeF64(lhs), decodeF64(rhs)
	case out.IsFloat():
		m.kind = accF32
		m.l32, m.r32 = decodeF32(lhs), decodeF32(rhs)
	default:
		m.kind = accInt
		m.li, m.ri = decodeInt(lhs), decodeInt(rhs)
	}
	return m, nil
}

func decodeF64(l *hlo.Literal) []float64 {
	v := make([]float64, l.NumElements())
	for i := range v {
		v[i] = l.Float64(i)
	}
	return v
}

func decodeF32(l *hlo.Literal) []float32 {
	v := make([]float32, l.NumElements())
	for i := range v {
		v[i] = float32(l.Float64(i))
	}
	return v
}

// decodeInt sign-extends signed elements and zero-extends the others; products and
// sums then wrap correctly in any narrower result width.
func decodeInt(l *hlo.Literal) []int64 {
	v := make([]int64, l.NumElements())
	for i := range v {
		v[i] = l.Int64(i)
	}
	return v
}

// add accumulates lhs[l] * rhs[r]. The explicit conversions keep the compiler from
// fusing the multiply and the add.
func (m *macOperands) add(acc *accumulator, l, r int64) {
	switch m.kind {
	case accF32:
		acc.f32 += float32(m.l32[l] * m.r32[r])
	case accF64:
		acc.f64 += float64(m.l64[l] * m.r64[r])
	default:
		acc.i += m.li[l] * m.ri[r]
	}
}

// store rounds the sum to the result type and writes it as element i.
func (m *macOperands) store(out *hlo.Literal, i int, acc accumulator) {
	switch {
	case m.kind == accF32:
		out.SetBits(i, fromFloat(m.out, float64(acc.f32)))
	case m.kind == accF64:
		out.SetBits(i, fromFloat(m.out, acc.f64))
	case m.out == hlo.Pred:
		out.SetBool(i, acc.i != 0)
	default:
		out.SetBits(i, uint64(acc.i)&widthMask(m.out))
	}
}

// evalDot is XLA's general dot. The result's dimensions are the batch dimensions
// (in lhs_batch_dims order), then lhs's free dimensions, then rhs's, each in
// operand order. Each result element sums over the contracting dimensions in
// row-major order of lhs_contracting_dims as listed.
func evalDot(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	lhs, rhs, dn := ops[0], ops[1], in.Attrs.Dot
	if dn == nil {
		dn = &hlo.DotDims{LhsContracting: []int64{int64(lhs.Shape().Rank() - 1)}, RhsContracting: []int64{0}}
	}
	ls, rs := lhs.Shape(), rhs.Shape()
	if err := checkDotDims(dn, ls, rs); err != nil {
		return nil, err
	}
	lhsFree := hlo.Complement(ls.Rank(), dn.LhsBatch, dn.LhsContracting)
	rhsFree := hlo.Complement(rs.Rank(), dn.RhsBatch, dn.RhsContracting)
	outDims := append(append(pick(ls.Dims, dn.LhsBatch), pick(ls.Dims, lhsFree)...), pick(rs.Dims, rhsFree)...)
	if !hlo.MakeShape(in.Shape.DType, outDims...).Equal(in.Shape) {
		return nil, fmt.Errorf("dot of %v and %v gives dimensions %v, result declares %v", ls, rs, outDims, in.Shape)
	}
	mac, err := newMacOperands(in.Shape.DType, lhs, rhs)
	if err != nil {
		return nil, err
	}
	lStr, rStr := ls.Strides(), rs.Strides()
	// The offsets of every contracting position, computed once.
	var lk, rk []int64
	forEachIndex(pick(ls.Dims, dn.LhsContracting), func(c []int64) {
		var lo, ro int64
		for j, v := range c {
			lo += v * lStr[dn.LhsContracting[j]]
			ro += v * rStr[dn.RhsContracting[j]]
		}
		lk, rk = append(lk, lo), append(rk, ro)
	})
	nb, nl := len(dn.LhsBatch), len(lhsFree)
	out := hlo.NewLiteral(in.Shape)
	i := 0
	ev.forEachIndex(outDims, func(idx []int64) {
		var lBase, rBase int64
		for j := 0; j < nb; j++ {
			lBase += idx[j] * lStr[dn.LhsBatch[j]]
			rBase += idx[j] * rStr[dn.RhsBatch[j]]
		}
		for j, d := range lhsFree {
			lBase += idx[nb+j] * lStr[d]
		}
		for j, d := range rhsFree {
			rBase += idx[nb+nl+j] * rStr[d]
		}
		var acc accumulator
		for k := range lk {
			mac.add(&acc, lBase+lk[k], rBase+rk[k])
		}
		mac.store(out, i, acc)
		i++
	})
	return out, nil
}

// checkDotDims validates dot dimension numbers against the operand shapes.
func checkDotDims(dn *hlo.DotDims, ls, rs hlo.Shape) error {
	if len(dn.LhsBatch) != len(dn.RhsBatch) || len(dn.LhsContracting) != len(dn.RhsContracting) {
		return fmt.Errorf("dot dimension numbers pair %d/%d batch and %d/%d contracting dimensions",
			len(dn.LhsBatch), len(dn.RhsBatch), len(dn.LhsContracting), len(dn.RhsContracting))
	}
	for _, c := range []struct {
		what string
		dims []int64
		rank int
	}{{"lhs batch", dn.LhsBatch, ls.Rank()}, {"rhs batch", dn.RhsBatch, rs.Rank()},
		{"lhs contracting", dn.LhsContracting, ls.Rank()}, {"rhs contracting", dn.RhsContracting, rs.Rank()}} {
		if err := checkDimList(c.what, c.dims, c.rank); err != nil {
			return err
		}
	}
	for j := range dn.LhsBatch {
		if ls.Dims[dn.LhsBatch[j]] != rs.Dims[dn.RhsBatch[j]] {
			return fmt.Errorf("batch dimension %d: lhs %v and rhs %v differ", j, ls, rs)
		}
	}
	for j := range dn.LhsContracting {
		if ls.Dims[dn.LhsContracting[j]] != rs.Dims[dn.RhsContracting[j]] {
			return fmt.Errorf("contracting dimension %d: lhs %v and rhs %v differ", j, ls, rs)
		}
	}
	return nil
}
