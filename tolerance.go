package vkxla

import "github.com/vkxla/vkxla/hlo"

// ErrorSpec is how far a device result may be from cpuref's: element by element,
// |got - want| <= Abs + Rel*|want| (hlo.LiteralsClose). Zero means exact equality.
type ErrorSpec struct{ Abs, Rel float64 }

// Exact demands bit-equal results (NaN matching NaN).
func (e ErrorSpec) Exact() bool { return e.Abs == 0 && e.Rel == 0 }

// Tolerance is the one place that states how far the GPU may be from cpuref, per op
// and element type. Integer, pred and data-movement results must be exact.
// Floating-point bounds follow Vulkan's precision requirements (SPIR-V env spec,
// "Precision and Operation of SPIR-V Instructions"): add, subtract, multiply,
// compare and conversions are correctly rounded; division is within 2.5 ulp; exp,
// log, pow, tanh and atan2 are within a few ulp (relative ~1e-5 at f32); sine and
// cosine are only bounded absolutely (2^-11). f16 and bf16 compute in f32 and
// round once per op, so they may differ by one unit of their own precision.
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
	case hlo.OpNegate, hlo.OpAbs, hlo.OpSign, hlo.OpFloor, hlo.OpCeil, hlo.OpRoundNearestEven,
		hlo.OpIsFinite, hlo.OpMaximum, hlo.OpMinimum, hlo.OpCompare, hlo.OpSelect, hlo.OpClamp,
		hlo.OpConvert, hlo.OpBitcastConvert, hlo.OpSort:
		return true
	}
	return false
}

func opTolerance(op hlo.Opcode) ErrorSpec {
	switch op {
	case hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply:
		return ErrorSpec{Rel: 1e-7}
	case hlo.OpDivide, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpRemainder:
		return ErrorSpec{Abs: 1e-6, Rel: 1e-6}
	case hlo.OpSin, hlo.OpCos:
		return ErrorSpec{Abs: 1e-3, Rel: 1e-5}
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
			spec.Abs, spec.Rel = max(spec.Abs, t.Abs), max(spec.Rel, t.Rel)
			if !t.Exact() {
				n++
			}
		}
	}
	scale := float64(max(1, min(n, 10)))
	return ErrorSpec{Abs: spec.Abs * scale, Rel: spec.Rel * scale}
}
