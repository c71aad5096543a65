package vkxla

import (
	"fmt"
	"math"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// ErrorSpec is how far a device result may be from cpuref's: element by element,
// |got - want| <= Abs + Rel*|want| (hlo.LiteralsClose), or, where ULP is set, at most
// ULP units in the last place of the element type apart (ULPDistance; Abs and Rel
// are then not used). Zero means exact equality.
type ErrorSpec struct{ Abs, Rel, ULP float64 }

// Exact demands bit-equal results (NaN matching NaN).
func (e ErrorSpec) Exact() bool { return e.Abs == 0 && e.Rel == 0 && e.ULP == 0 }

// Check reports, as an error, where got is further from want than e allows.
func (e ErrorSpec) Check(got, want *hlo.Literal) error {
	switch {
	case e.Exact():
		return hlo.LiteralsEqual(got, want)
	case e.ULP == 0:
		return hlo.LiteralsClose(got, want, e.Abs, e.Rel)
	}
	if err := hlo.LiteralsEqual(got, want); err == nil || !got.Shape().Equal(want.Shape()) ||
		got.Shape().IsTuple() || !got.DType().IsFloat() {
		return err
	}
	first, count := -1, 0
	for i := range got.NumElements() {
		if ULPDistance(got.DType(), got.Bits(i), want.Bits(i)) > e.ULP {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if count == 0 {
		return nil
	}
	return fmt.Errorf("%v literals differ by more than %g ulp at element %d: got %s, want %s, %g ulp apart (%d of %d elements)",
		got.Shape(), e.ULP, first, hlo.FormatElement(got, first), hlo.FormatElement(want, first),
		ULPDistance(got.DType(), got.Bits(first), want.Bits(first)), count, got.NumElements())
}

// ULPDistance is how many representable values of the float type dt lie between the
// encodings a and b, counting one of the two ends: 0 for equal values (and for any
// two NaNs), 1 between neighbours, 1 between -0 and +0 (the sign of zero counts), +Inf
// between a NaN and a number.
func ULPDistance(dt hlo.DType, a, b uint64) float64 {
	if dt.IsLowPrecisionFloat() {
		return minifloatULPDistance(dt, a, b)
	}
	w := uint(dt.Bits())
	sign := uint64(1) << (w - 1)
	expMask := (sign - 1) &^ (1<<mantissaBits(dt) - 1)
	isNaN := func(v uint64) bool { return v&expMask == expMask && v&(1<<mantissaBits(dt)-1) != 0 }
	if isNaN(a) || isNaN(b) {
		if isNaN(a) && isNaN(b) {
			return 0
		}
		return math.Inf(1)
	}
	// Order the encodings as integers: negatives below -0 = -1 below +0 = 0.
	ordered := func(v uint64) int64 {
		if v&sign != 0 {
			return -int64(v&^sign) - 1
		}
		return int64(v)
	}
	d := ordered(a) - ordered(b)
	return math.Abs(float64(d))
}

// minifloatULPDistance is ULPDistance for the signed 8-, 6- and 4-bit floats, whose
// NaNs hlo.MinifloatToFloat64 recognises (their finite encodings are in
// sign-magnitude order as IEEE's are); f8e8m0fnu, unsigned, orders as its bits.
func minifloatULPDistance(dt hlo.DType, a, b uint64) float64 {
	an, bn := math.IsNaN(hlo.MinifloatToFloat64(dt, a)), math.IsNaN(hlo.MinifloatToFloat64(dt, b))
	switch {
	case an && bn:
		return 0
	case an || bn:
		return math.Inf(1)
	case dt == hlo.F8E8M0FNU:
		return math.Abs(float64(int64(a) - int64(b)))
	}
	sign := uint64(1) << (dt.Bits() - 1)
	ordered := func(v uint64) int64 {
		if v&sign != 0 {
			return -int64(v&^sign) - 1
		}
		return int64(v)
	}
	return math.Abs(float64(ordered(a) - ordered(b)))
}

// mantissaBits is the number of stored significand bits of a float type.
func mantissaBits(dt hlo.DType) uint {
	switch dt {
	case hlo.F16:
		return 10
	case hlo.BF16:
		return 7
	case hlo.F32:
		return 23
	}
	return 52
}

// Tolerance is the one place that states how far the GPU may be from cpuref, per op
// and element type. Integer, pred and data-movement results must be exact.
// Floating-point bounds follow Vulkan's precision requirements (SPIR-V env spec,
// "Precision and Operation of SPIR-V Instructions"): add, subtract, multiply,
// compare and conversions are correctly rounded; division is within 2.5 ulp; exp,
// log, pow and tanh are within a few ulp (relative ~1e-5 at f32). Stricter than
// Vulkan, by codegen's own implementations (docs/codegen.md): remainder (fmod) is
// exact, its result always representable; sine and cosine are within 2 ulp over the
// whole finite range, atan2 within 4, f64 power within 8. f16 and bf16 compute in f32 and round once
// per op, so they may differ by one unit of their own precision (within the ulp
// bounds too); the 8-bit floats likewise, by one of their ulps. The absolute terms would also accept subnormal results flushed to
// zero by a device without denorm preservation (lavapipe keeps them).
// Accumulations (reduce, dot, convolution) add the reordering error of summing in
// another order; the tests keep inputs in [-1, 1] and sizes moderate. The reduce
// row covers every strategy that sums in another order than cpuref: the workgroup
// tree, and the row kernels of fusion (a subgroup per row, its lanes' partial sums
// combined by subgroup arithmetic), so fused and unfused programs with float sums
// agree with cpuref, and with each other, within it rather than bit for bit. Row
// kernels that fold one row per invocation (f16/bf16 sums, other reducers) and
// max/min, exact in any order, still match cpuref bit for bit.
func Tolerance(op hlo.Opcode, dt hlo.DType) ErrorSpec {
	if dt.IsComplex() {
		return complexTolerance(op, dt)
	}
	if !dt.IsFloat() || exactOp(op) {
		return ErrorSpec{}
	}
	if op == hlo.OpPower && dt == hlo.F64 {
		return ErrorSpec{ULP: 8} // double-word y·ln|x| (docs/codegen.md)
	}
	if dt.IsLowPrecisionFloat() {
		// Computed in f32 and rounded once: the f32 results are within the f32
		// bounds below, which can move the rounding across one f8 tie at most.
		return ErrorSpec{ULP: 1}
	}
	spec := opTolerance(op)
	switch dt {
	case hlo.F16:
		spec.Rel = max(spec.Rel, 2e-3)
		spec.Abs = max(spec.Abs, 1e-3)
	case hlo.BF16:
		spec.Rel = max(spec.Rel, 1.6e-2)
		spec.Abs = max(spec.Abs, 1e-2)
	}
	return spec
}

// exactOp reports ops whose float results are exact: data movement and selection,
// and the arithmetic Vulkan requires to be correctly rounded.
func exactOp(op hlo.Opcode) bool {
	switch op.Info().Kind {
	case hlo.KindMovement, hlo.KindLeaf, hlo.KindTuple:
		return true
	}
	if op.Info().ExpandedBy == hlo.CollectiveExpander { // identities and zeros on one device
		return true
	}
	switch op {
	case hlo.OpNegate, hlo.OpAbs, hlo.OpSign, hlo.OpFloor, hlo.OpCeil, hlo.OpRoundNearestEven, hlo.OpRoundNearestAfz, hlo.OpReal, hlo.OpImag,
		hlo.OpIsFinite, hlo.OpMaximum, hlo.OpMinimum, hlo.OpCompare, hlo.OpSelect, hlo.OpClamp,
		hlo.OpConvert, hlo.OpBitcastConvert, hlo.OpSort, hlo.OpRemainder, hlo.OpTopK, hlo.OpBitcast:
		return true
	}
	return false
}

func opTolerance(op hlo.Opcode) ErrorSpec {
	switch op {
	case hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply:
		return ErrorSpec{Rel: 1e-7}
	case hlo.OpDivide, hlo.OpSqrt, hlo.OpRsqrt:
		return ErrorSpec{Abs: 1e-6, Rel: 1e-6}
	case hlo.OpSin, hlo.OpCos:
		return ErrorSpec{ULP: 2}
	case hlo.OpAtan2:
		return ErrorSpec{ULP: 4}
	case hlo.OpErf: // erf.go's series or continued fraction: 3 ulp measured
		return ErrorSpec{ULP: 4}
	case hlo.OpTan: // sine over cosine: 3 ulp measured
		return ErrorSpec{ULP: 4}
	case hlo.OpReduce, hlo.OpReduceWindow, hlo.OpDot, hlo.OpConvolution, hlo.OpSelectAndScatter, hlo.OpScatter, hlo.OpFft,
		hlo.OpBatchNormTraining, hlo.OpBatchNormInference, hlo.OpBatchNormGrad,
		hlo.OpTriangularSolve, hlo.OpCholesky: // substitution and factorisation sum like a dot
		return ErrorSpec{Abs: 1e-4, Rel: 1e-4}
	case hlo.OpPower:
		return ErrorSpec{Abs: 1e-5, Rel: 1e-4}
	case hlo.OpRng: // uniform draws are exact; normal ones go through log, sqrt, sine and cosine (7e-7 measured)
		return ErrorSpec{Abs: 1e-5, Rel: 1e-5}
	}
	return ErrorSpec{Abs: 1e-5, Rel: 1e-5}
}

// ProgramTolerance is the bound for a whole program's outputs of type dt. Each
// instruction contributes the bound of the op in the type it computes in (its own
// element type, not dt): an f32 exp allows f32's error even where the program
// returns bf16, and a narrowing convert of an inexact value allows one step of the
// narrower type, since a value near a rounding boundary may round either way (an
// f32 exp → bf16 → f32 chain may differ from cpuref by a bf16 step, relative
// 2^-8, although the output is f32). Bounds are relative, so they carry over to
// the output unchanged; the loosest is taken and scaled by the number of inexact
// instructions (at most 10), since errors compound along a chain.
func ProgramTolerance(m *hlo.Module, dt hlo.DType) ErrorSpec {
	var spec ErrorSpec
	n := 0
	for _, c := range m.Computations {
		inexact := map[*hlo.Instruction]bool{}
		for _, in := range c.Instructions {
			t := instructionTolerance(in, dt, inexact)
			if t.Exact() {
				continue
			}
			inexact[in] = true
			spec.Abs, spec.Rel = max(spec.Abs, t.Abs), max(spec.Rel, t.Rel)
			n++
		}
	}
	scale := float64(max(1, min(n, 10)))
	return ErrorSpec{Abs: spec.Abs * scale, Rel: spec.Rel * scale}
}

// instructionTolerance is the error instruction in may add, as Abs and Rel (a ULP bound
// becomes the relative size of that many ulp of the type it computes in):
// Tolerance of its op in that type, or, for a narrowing float convert of an operand
// that inexact marks, one step of the narrower type.
func instructionTolerance(in *hlo.Instruction, out hlo.DType, inexact map[*hlo.Instruction]bool) ErrorSpec {
	dt := computeType(in.Shape, out)
	if in.Op == hlo.OpConvert && len(in.Operands) == 1 && inexact[in.Operands[0]] {
		from := in.Operands[0].Shape.DType
		if dt.IsFloat() && from.IsFloat() && mantissaBits(dt) < mantissaBits(from) {
			return ErrorSpec{Rel: math.Ldexp(1, -int(mantissaBits(dt)))}
		}
	}
	if !inexact[in] && slices.ContainsFunc(in.Operands, func(o *hlo.Instruction) bool { return inexact[o] }) {
		inexact[in] = true // carries an inexact value on, adding nothing of its own
	}
	t := Tolerance(in.Op, dt)
	if t.ULP > 0 {
		eps := t.ULP * math.Ldexp(1, -int(mantissaBits(dt)))
		t = ErrorSpec{Abs: max(t.Abs, eps), Rel: max(t.Rel, eps)}
	}
	return t
}

// computeType is the type an instruction of shape s computes in: its element type,
// or the first float element of a tuple, or out for a tuple without one (a while
// loop's state may be all integers while its body computes in floats).
func computeType(s hlo.Shape, out hlo.DType) hlo.DType {
	if !s.IsTuple() {
		return s.DType // integer and pred results are exact
	}
	for _, e := range s.Elems {
		if dt := computeType(e, hlo.Invalid); dt.IsFloat() {
			return dt
		}
	}
	return out
}

// complexTolerance is the tolerance of an op on complex operands, each part
// compared relative to the modulus (hlo.LiteralsClose): the ops that move or make
// elements are exact, and so is the c64 product, which the kernel computes with
// cpuref's f32 operations in cpuref's order; abs is within a few ulp; the others
// (exp: the f32 exp's, 1e-5) take their part type's.
func complexTolerance(op hlo.Opcode, dt hlo.DType) ErrorSpec {
	if op == hlo.OpReduceWindow { // a sum over each window: reduce's tolerance
		op = hlo.OpReduce
	}
	if dt == hlo.C128 {
		return c128Tolerance(op)
	}
	switch op {
	case hlo.OpAbs, hlo.OpSign: // the kernel's hypot rounds four times (complex.go)
		return ErrorSpec{Rel: 1e-6}
	case hlo.OpSin, hlo.OpCos: // f32 sine or cosine times sinh or cosh, whose exp is f32 exp's (1e-5)
		return ErrorSpec{Abs: 1e-6, Rel: 1e-5}
	case hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p, hlo.OpPower:
		return complexTranscendentalTolerance(op)
	}
	if exactOp(op) || op == hlo.OpComplex || (op == hlo.OpMultiply && dt == hlo.C64) {
		return ErrorSpec{}
	}
	return Tolerance(op, dt.ComplexPart())
}

// c128Tolerance is the tolerance of an op on c128, whose kernels compute in f64
// the algorithms cpuref runs in Go's complex128 and math/cmplx (docs/complex.md,
// "On the GPU", with the errors measured): the arithmetic without rounding
// choices (the textbook product, part by part sums) is exact; abs, sign, divide,
// sqrt and rsqrt are cpuref's operations in cpuref's order but for hypot's and
// sqrt's roundings, within 4ε of the modulus (ε = 2⁻⁵²); exp, log, sine and
// cosine add the f64 exp's, log's, atan2's and sine's few ulp, within 16ε;
// sums (reduce, fft) reorder, within f64 reduce's 1e-12 of the result's modulus.
func c128Tolerance(op hlo.Opcode) ErrorSpec {
	const eps = 0x1p-52
	switch op {
	case hlo.OpAbs, hlo.OpSign, hlo.OpDivide, hlo.OpSqrt, hlo.OpRsqrt:
		return ErrorSpec{Rel: 4 * eps}
	case hlo.OpExp, hlo.OpLog, hlo.OpSin, hlo.OpCos:
		return ErrorSpec{Rel: 16 * eps}
	case hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p:
		// cpuref's forms in f64 with the kernels' exp, sine and log: worst
		// measured 1.3e-15 (6ε, tanh and tan at the pole i·f64(π/2), where the
		// kernel's tan y is sin y·cos y/cos²y), 2.7e-16 for expm1 and log1p
		// (TestComplexTranscendentalWorstError).
		return ErrorSpec{Rel: 16 * eps}
	case hlo.OpPower:
		// cmplx.Pow's algorithm in f64: the angle p·arg z + q·log|z| carries
		// atan2's and log's ulp times the exponent, so the error grows with it;
		// worst measured 5.8e-15 (26ε, (2.3e250 + 2.3e110i)^(1.2 − 0.97i), an
		// angle of 560).
		return ErrorSpec{Rel: 64 * eps}
	case hlo.OpReduce, hlo.OpFft, hlo.OpDot, hlo.OpConvolution: // four f64 contractions (passes/complex_dot.go)
		return ErrorSpec{Rel: 1e-12}
	}
	if exactOp(op) || op == hlo.OpComplex || op == hlo.OpAdd || op == hlo.OpSubtract || op == hlo.OpMultiply {
		return ErrorSpec{}
	}
	return Tolerance(op, hlo.F64) // an op with a c128 kernel yet to come
}

// complexTranscendentalTolerance is the tolerance of c64 tanh, tan, expm1, log1p
// and power (docs/complex.md, measured there), relative to the modulus; the
// absolute term is f32's smallest normal number, as lavapipe flushes subnormal
// results to zero.
func complexTranscendentalTolerance(op hlo.Opcode) ErrorSpec {
	const flushed = 0x1p-126
	switch op {
	case hlo.OpExpm1: // f32 exp's error on a large real part (3.4e-6 measured)
		return ErrorSpec{Abs: flushed, Rel: 1e-5}
	case hlo.OpPower: // f32 pow's: the angle's error grows with it (docs/complex.md)
		return ErrorSpec{Abs: flushed, Rel: 1e-4}
	}
	return ErrorSpec{Abs: flushed, Rel: 1e-6} // 2.3e-7 measured
}
