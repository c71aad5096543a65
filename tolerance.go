package vkxla

import (
	"fmt"
	"math"

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
// whole finite range, atan2 within 4. f16 and bf16 compute in f32 and round once
// per op, so they may differ by one unit of their own precision (within the ulp
// bounds too). The absolute terms would also accept subnormal results flushed to
// zero by a device without denorm preservation (lavapipe keeps them).
// Accumulations (reduce, dot, convolution) add the reordering error of summing in
// another order; the tests keep inputs in [-1, 1] and sizes moderate.
func Tolerance(op hlo.Opcode, dt hlo.DType) ErrorSpec {
	if !dt.IsFloat() || exactOp(op) {
		return ErrorSpec{}
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
		hlo.OpConvert, hlo.OpBitcastConvert, hlo.OpSort, hlo.OpRemainder:
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
	case hlo.OpReduce, hlo.OpReduceWindow, hlo.OpDot, hlo.OpConvolution, hlo.OpSelectAndScatter, hlo.OpScatter,
		hlo.OpBatchNormTraining, hlo.OpBatchNormInference, hlo.OpBatchNormGrad:
		return ErrorSpec{Abs: 1e-4, Rel: 1e-4}
	case hlo.OpPower:
		return ErrorSpec{Abs: 1e-5, Rel: 1e-4}
	}
	return ErrorSpec{Abs: 1e-5, Rel: 1e-5}
}

// ProgramTolerance is the bound for a whole program's outputs: the loosest of its
// instructions' bounds, scaled by depth since errors compound along a chain.
func ProgramTolerance(m *hlo.Module, dt hlo.DType) ErrorSpec {
	var spec ErrorSpec
	n := 0
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			t := Tolerance(in.Op, dt)
			if t.ULP > 0 { // as a relative (and, for chains, absolute) bound
				eps := t.ULP * math.Ldexp(1, -int(mantissaBits(dt)))
				t.Abs, t.Rel = max(t.Abs, eps), max(t.Rel, eps)
			}
			spec.Abs, spec.Rel = max(spec.Abs, t.Abs), max(spec.Rel, t.Rel)
			if !t.Exact() {
				n++
			}
		}
	}
	scale := float64(max(1, min(n, 10)))
	return ErrorSpec{Abs: spec.Abs * scale, Rel: spec.Rel * scale}
}
