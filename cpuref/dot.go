package cpuref

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

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

// macOperands holds the lhs decoded into the accumulation type (the rhs is packed
// into panels by the contraction, contract.go).
type macOperands struct {
	kind accKind
	out  hlo.DType
	l32  []float32
	l64  []float64
	li   []int64
}

func newMacOperands(out hlo.DType, lhs, rhs *hlo.Literal) (*macOperands, error) {
	if !out.IsValid() || !lhs.DType().IsValid() || !rhs.DType().IsValid() {
		return nil, fmt.Errorf("contraction of %v and %v into %v", lhs.Shape(), rhs.Shape(), out)
	}
	m := &macOperands{out: out}
	switch {
	case out == hlo.F64:
		m.kind = accF64
		m.l64 = decodeF64(lhs)
	case out.IsFloat():
		m.kind = accF32
		m.l32 = decodeF32(lhs)
	default:
		m.kind = accInt
		m.li = decodeInt(lhs)
	}
	return m, nil
}

func decodeF64(l *hlo.Literal) []float64 {
	v := make([]float64, l.NumElements())
	parallelFor(len(v), 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v[i] = l.Float64(i)
		}
	})
	return v
}

func decodeF32(l *hlo.Literal) []float32 {
	v := make([]float32, l.NumElements())
	read := f32Reader(l)
	parallelFor(len(v), 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v[i] = read(i)
		}
	})
	return v
}

// f32Reader reads element i of a literal as float32 (float32(l.Float64(i))), from
// the bytes directly for f32 and bf16, the common cases.
func f32Reader(l *hlo.Literal) func(i int) float32 {
	data := l.Bytes()
	switch l.DType() {
	case hlo.F32:
		return func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])) }
	case hlo.BF16:
		return func(i int) float32 { return math.Float32frombits(uint32(binary.LittleEndian.Uint16(data[2*i:])) << 16) }
	}
	return func(i int) float32 { return float32(l.Float64(i)) }
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

// storeF32 etc. round a finished sum to the result type and write it as element i.
func (m *macOperands) storeF32(out *hlo.Literal) func(int, float32) {
	if m.out == hlo.F32 { // fromFloat(F32, v) is v's bits
		data := out.Bytes()
		return func(i int, v float32) { binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v)) }
	}
	return func(i int, v float32) { out.SetBits(i, fromFloat(m.out, float64(v))) }
}

func (m *macOperands) storeF64(out *hlo.Literal) func(int, float64) {
	return func(i int, v float64) { out.SetBits(i, fromFloat(m.out, v)) }
}

func (m *macOperands) storeInt(out *hlo.Literal) func(int, int64) {
	if m.out == hlo.Pred {
		return func(i int, v int64) { out.SetBool(i, v != 0) }
	}
	mask := widthMask(m.out)
	return func(i int, v int64) { out.SetBits(i, uint64(v)&mask) }
}

// run evaluates the contraction into out in the accumulation type (contract.go).
func (m *macOperands) run(ev *evaluator, c *contraction, rhs, out *hlo.Literal) {
	packed := out.DType().IsSubByte()
	switch m.kind {
	case accF32:
		read := f32Reader(rhs)
		runContraction(ev, c, m.l32, func(i int64) float32 { return read(int(i)) }, packedSafeStore(m.storeF32(out), packed), f32Kernel())
	case accF64:
		runContraction(ev, c, m.l64, func(i int64) float64 { return rhs.Float64(int(i)) }, packedSafeStore(m.storeF64(out), packed), macKernel[float64])
	default:
		runContraction(ev, c, m.li, func(i int64) int64 { return rhs.Int64(int(i)) }, packedSafeStore(m.storeInt(out), packed), macKernel[int64])
	}
}

// packedSafeStore makes the stores into a packed (sub-byte) result one at a time: two
// elements of one byte may be written by different workers, and each write is a
// read-modify-write of the byte.
func packedSafeStore[T any](store func(int, T), packed bool) func(int, T) {
	if !packed {
		return store
	}
	var mu sync.Mutex
	return func(i int, v T) {
		mu.Lock()
		store(i, v)
		mu.Unlock()
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
	c, err := dotContraction(dn, ls, rs)
	if err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(in.Shape)
	if in.Shape.DType.IsComplex() {
		if err := sameComplexType(in, lhs, rhs); err != nil {
			return nil, err
		}
		evalComplexDot(c, lhs, rhs, out)
		return out, nil
	}
	mac, err := newMacOperands(in.Shape.DType, lhs, rhs)
	if err != nil {
		return nil, err
	}
	mac.run(ev, c, rhs, out)
	return out, nil
}

// dotContraction is the dot as one matrix product per batch index: rows are lhs's
// free positions, columns rhs's, each row-major.
func dotContraction(dn *hlo.DotDims, ls, rs hlo.Shape) (*contraction, error) {
	lhsFree := hlo.Complement(ls.Rank(), dn.LhsBatch, dn.LhsContracting)
	rhsFree := hlo.Complement(rs.Rank(), dn.RhsBatch, dn.RhsContracting)
	lStr, rStr := ls.Strides(), rs.Strides()
	lb, rb := pairOffsets(pick(ls.Dims, dn.LhsBatch), lStr, rStr, dn.LhsBatch, dn.RhsBatch)
	lk, rk := pairOffsets(pick(ls.Dims, dn.LhsContracting), lStr, rStr, dn.LhsContracting, dn.RhsContracting)
	lf, _ := pairOffsets(pick(ls.Dims, lhsFree), lStr, lStr, lhsFree, lhsFree)
	rf, _ := pairOffsets(pick(rs.Dims, rhsFree), rStr, rStr, rhsFree, rhsFree)
	if len(lk) > math.MaxInt32 {
		return nil, fmt.Errorf("dot contracts %d positions, over %d", len(lk), math.MaxInt32)
	}
	rows, cols := len(lf), len(rf)
	return &contraction{
		groups: len(lb), rows: rows, cols: cols, depth: len(lk),
		rhsIndex: func(g, k, n int) int64 { return rb[g] + rk[k] + rf[n] },
		outIndex: func(g, r, n int) int { return (g*rows+r)*cols + n },
		terms: func(g, r int, l []int64, k []int32) ([]int64, []int32) {
			base := lb[g] + lf[r]
			for i, o := range lk {
				l, k = append(l, base+o), append(k, int32(i))
			}
			return l, k
		},
	}, nil
}

// pairOffsets lists, for every index of dims in row-major order, its offset in two
// operands whose dimensions ld and rd (of strides lStr, rStr) those dims are.
func pairOffsets(dims, lStr, rStr, ld, rd []int64) (lo, ro []int64) {
	forEachIndex(dims, func(c []int64) {
		var l, r int64
		for j, v := range c {
			l += v * lStr[ld[j]]
			r += v * rStr[rd[j]]
		}
		lo, ro = append(lo, l), append(ro, r)
	})
	return lo, ro
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
