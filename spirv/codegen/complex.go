package codegen

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Complex numbers on the GPU: c64 a vec2 of f32, c128 a vec2 of f64, (real,
// imaginary), in registers and in storage (ArrayStride 8 and 16: XLA's layouts).
// One kernel per op serves both (complex_part.go). c64 is computed in f32, where
// cpuref computes in f64 and rounds once, and c128 in f64, where cpuref uses Go's
// complex128 arithmetic and math/cmplx: results agree within a tolerance
// (vkxla.Tolerance). Ops outside ComplexOps have no complex kernel: Lower refuses
// them (checkTypes), and plan.Build refuses a module using them before any pass
// runs; a target without Float64 and Int64 refuses c128 (missingFeature).

// ComplexOps are the ops whose kernels handle c64 and c128 values: the
// arithmetic, the parts, abs, sign, exp, log, sqrt, rsqrt, sine and cosine,
// reductions, gather, scatter, reduce-window, sort, fft and everything that
// only moves or selects elements. plan.Build reads it.
var ComplexOps = map[hlo.Opcode]bool{
	hlo.OpParameter: true, hlo.OpConstant: true, hlo.OpTuple: true, hlo.OpGetTupleElement: true,
	hlo.OpFusion: true, hlo.OpCall: true,
	hlo.OpNegate: true, hlo.OpReal: true, hlo.OpImag: true, hlo.OpComplex: true, hlo.OpAbs: true, hlo.OpSign: true, hlo.OpExp: true, hlo.OpLog: true, hlo.OpSqrt: true, hlo.OpRsqrt: true,
	hlo.OpSin: true, hlo.OpCos: true,
	hlo.OpTanh: true, hlo.OpTan: true, hlo.OpExpm1: true, hlo.OpLog1p: true, hlo.OpPower: true,
	hlo.OpAdd: true, hlo.OpSubtract: true, hlo.OpMultiply: true, hlo.OpDivide: true,
	hlo.OpCompare: true, hlo.OpSelect: true, hlo.OpConvert: true,
	hlo.OpBroadcast: true, hlo.OpReshape: true, hlo.OpTranspose: true, hlo.OpSlice: true,
	hlo.OpConcatenate: true, hlo.OpPad: true, hlo.OpReverse: true, hlo.OpCopy: true,
	hlo.OpDynamicSlice: true, hlo.OpDynamicUpdateSlice: true,
	// Reductions of c64 by a reducer of the ops above (a sum, say): the
	// elemental loop, the workgroup tree and the two-pass reduction hold the
	// accumulators as vec2 (no subgroup path: subgroupReducer takes real types).
	hlo.OpReduce: true,
	// gather is index arithmetic (emitGather), as for real types. scatter,
	// reduce-window and sort call their computations (a combiner, a reducer, a
	// comparator of complex scalars) through the same emitter: scatter's
	// combiner is never atomic for complex (atomicCombiner takes 32-bit
	// integers), so updates run in cpuref's order (scatterSerial) or, with
	// unique indices, one invocation each; sort's comparator compares parts
	// (real, imag) or uses EQ/NE, the only complex compares.
	hlo.OpGather: true, hlo.OpScatter: true, hlo.OpReduceWindow: true, hlo.OpSort: true,
	// fft of c64, every length (fft.go; fftSupport: a target without Int64
	// refuses Bluestein lengths above 46340).
	hlo.OpFft: true,
}

// complexType is the register and storage type of the complex value being
// lowered: a vec2 of partType.
func (k *kernel) complexType() spirv.ID { return k.m.TypeVector(k.partType(), 2) }

// makeComplex joins two values of partType.
func (k *kernel) makeComplex(re, im spirv.ID) spirv.ID {
	return k.f.CompositeConstruct(k.complexType(), re, im)
}

func (k *kernel) parts(z spirv.ID) (re, im spirv.ID) {
	return k.f.CompositeExtract(z, 0), k.f.CompositeExtract(z, 1)
}

// complexConstant is element i of a c64 or c128 literal.
func (k *kernel) complexConstant(l *hlo.Literal, i int) spirv.ID {
	k.lowerComplex(l.DType())
	z := l.Complex128(i)
	return k.m.ConstComposite(k.complexType(), k.partConst(real(z)), k.partConst(imag(z)))
}

func (k *kernel) complexUnary(op hlo.Opcode, dt hlo.DType, x spirv.ID) (spirv.ID, error) {
	k.lowerComplex(dt)
	switch op {
	case hlo.OpNegate:
		return k.f.FNegate(x), nil
	case hlo.OpReal:
		return k.f.CompositeExtract(x, 0), nil
	case hlo.OpImag:
		return k.f.CompositeExtract(x, 1), nil
	case hlo.OpAbs:
		return k.hypot(k.parts(x)), nil
	case hlo.OpExp:
		return k.complexExp(x), nil
	case hlo.OpSqrt:
		return k.complexSqrt(x), nil
	case hlo.OpSin, hlo.OpCos:
		return k.complexSinCos(x, op == hlo.OpCos), nil
	case hlo.OpTanh:
		return k.complexTanh(x), nil
	case hlo.OpTan:
		return k.complexTan(x), nil
	case hlo.OpExpm1:
		return k.complexExpm1(x), nil
	case hlo.OpLog1p:
		return k.complexLog1p(x)
	case hlo.OpRsqrt: // 1/sqrt, as cpuref
		return k.complexReciprocal(k.complexSqrt(x)), nil
	case hlo.OpLog: // log|z| + i·arg z, as math/cmplx (arg: atan2, cut along the negative reals)
		re, im := k.parts(x)
		arg, err := k.atan2(k.part, im, re)
		return k.makeComplex(k.logAbs(re, im), arg), err
	case hlo.OpSign: // z/|z|, and z itself at 0 (cpuref's complexSign)
		re, im := k.parts(x)
		r := k.hypot(re, im)
		q := k.makeComplex(k.exact(k.f.FDiv(re, r)), k.exact(k.f.FDiv(im, r)))
		zero := k.partConst(0)
		return k.f.Select(k.f.LogicalAnd(k.f.Equal(re, zero), k.f.Equal(im, zero)), x, q), nil
	}
	return 0, fmt.Errorf("%v of %v has no GPU kernel yet (cpuref computes it)", op, dt)
}

// hypot is √(x² + y²) without overflow or underflow in the squares: m·√(1 + (n/m)²)
// with m and n the larger and smaller magnitude, within a few ulp of cpuref's
// (math.Hypot in f64, rounded once for c64). As math.Hypot: +inf if either part is
// infinite (even beside a NaN), else NaN if either is NaN, and 0 at 0.
func (k *kernel) hypot(x, y spirv.ID) spirv.ID {
	f := k.f
	ax, ay := f.GLSL(spirv.GLSLFAbs, x), f.GLSL(spirv.GLSLFAbs, y)
	bigger := f.Greater(ax, ay)
	m, n := f.Select(bigger, ax, ay), f.Select(bigger, ay, ax)
	r := k.exact(f.FDiv(n, m))
	h := k.exact(f.FMul(m, k.sqrt(k.exact(f.FAdd(k.partConst(1), k.exact(f.FMul(r, r)))))))
	h = f.Select(f.Equal(m, k.partConst(0)), k.partConst(0), h)
	h = f.Select(f.LogicalOr(f.IsNan(x), f.IsNan(y)), k.partConst(math.NaN()), h)
	return f.Select(f.LogicalOr(f.IsInf(x), f.IsInf(y)), k.partConst(math.Inf(1)), h)
}

// complexBinary: add and subtract part by part; multiply the textbook product in
// the part type, every operation rounded on its own (NoContraction: no FMA, no
// reassociation), which is cpuref's definition of the c64 product (and Go's
// complex128 product, cpuref's c128 one, where Go does not fuse).
func (k *kernel) complexBinary(op hlo.Opcode, dt hlo.DType, a, b spirv.ID) (spirv.ID, error) {
	k.lowerComplex(dt)
	f := k.f
	switch op {
	case hlo.OpAdd:
		return k.exact(f.FAdd(a, b)), nil
	case hlo.OpSubtract:
		return k.exact(f.FSub(a, b)), nil
	case hlo.OpMultiply:
		ar, ai := k.parts(a)
		br, bi := k.parts(b)
		mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
		re := k.exact(f.FSub(mul(ar, br), mul(ai, bi)))
		im := k.exact(f.FAdd(mul(ar, bi), mul(ai, br)))
		return k.makeComplex(re, im), nil
	case hlo.OpDivide:
		return k.complexDivide(a, b), nil
	case hlo.OpPower:
		return k.complexPow(a, b)
	}
	return 0, fmt.Errorf("%v of %v has no GPU kernel yet (cpuref computes it)", op, dt)
}

// complexCompare is EQ (both parts equal; NaN unequal) or NE (its negation).
func (k *kernel) complexCompare(dir hlo.ComparisonDirection, a, b spirv.ID) (spirv.ID, error) {
	ar, ai := k.parts(a)
	br, bi := k.parts(b)
	eq := k.f.LogicalAnd(k.f.Equal(ar, br), k.f.Equal(ai, bi))
	switch dir {
	case hlo.CmpEQ:
		return eq, nil
	case hlo.CmpNE:
		return k.f.LogicalNot(eq), nil
	}
	return 0, fmt.Errorf("compare %v of complex operands (EQ and NE only)", dir)
}

// toComplex converts a real value (through its conversion to the part type, as
// cpuref) or a complex value (part by part: c64 ↔ c128, each part as the f32 ↔
// f64 conversion) to c64 or c128. complex → real is not an HLO convert (the
// verifier refuses it; take real or imag).
func (k *kernel) toComplex(v spirv.ID, from, to hlo.DType) (spirv.ID, error) {
	if !to.IsComplex() {
		return 0, fmt.Errorf("convert from %v to %v: a complex value converts only to a complex type", from, to)
	}
	part := to.ComplexPart()
	if from.IsComplex() {
		re, im := k.parts(v)
		re, im = k.convert(re, from.ComplexPart(), part), k.convert(im, from.ComplexPart(), part)
		k.lowerComplex(to)
		return k.makeComplex(re, im), nil
	}
	re := k.convert(v, from, part)
	k.lowerComplex(to)
	return k.makeComplex(re, k.partConst(0)), nil
}

// emitComplex is complex(re, im) of two f32 (f64) operands.
func emitComplex(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	re, im := g.emit(in.Operands[0], idx), g.emit(in.Operands[1], idx)
	g.k.lowerComplex(in.Shape.DType)
	return g.k.makeComplex(re, im)
}

// ComplexSupport says why an instruction with c64 or c128 values (its result's or
// an operand's) has no kernel, or "" where it has one (or holds none). Whether the
// target computes in f64 (c128) is checkTypes's question (missingFeature).
func ComplexSupport(in *hlo.Instruction) string {
	dt, ok := complexDType(in)
	switch {
	case !ok:
		return ""
	case !ComplexOps[in.Op]:
		return fmt.Sprintf("uses %v, and GPU code generation has no complex kernel for %v yet (cpuref evaluates it)", dt, in.Op)
	}
	return ""
}

// ExpandedComplexOps are the ops on complex values that have no kernel but that
// a required pass rewrites into ops that have one before code generation runs
// (dot, convolution: passes/complex_dot.go, four real ones of the parts). The plan accepts them
// where the target computes their type; ComplexSupport, which code generation
// asks, still refuses them.
var ExpandedComplexOps = map[hlo.Opcode]bool{hlo.OpDot: true, hlo.OpConvolution: true}

// ComplexTargetSupport is ComplexSupport on target t, the ExpandedComplexOps
// accepted: also why t cannot compute the c128 values in holds (missingFeature),
// or "".
func ComplexTargetSupport(in *hlo.Instruction, t Target) string {
	if why := ComplexSupport(in); why != "" && !ExpandedComplexOps[in.Op] {
		return why
	}
	if dt, ok := complexDType(in); ok {
		if why := missingFeature(dt, t); why != "" {
			return fmt.Sprintf("uses %v, which %s", dt, why)
		}
	}
	return ""
}

// hasComplex reports whether in's result or an operand has complex elements.
func hasComplex(in *hlo.Instruction) bool {
	_, ok := complexDType(in)
	return ok
}

// complexDType is the widest complex element type of in's result and operands.
func complexDType(in *hlo.Instruction) (hlo.DType, bool) {
	shapes := []hlo.Shape{in.Shape}
	for _, o := range in.Operands {
		if o != nil {
			shapes = append(shapes, o.Shape)
		}
	}
	found := hlo.Invalid
	for _, s := range shapes {
		for _, leaf := range s.Leaves() {
			if leaf.DType.IsComplex() && leaf.DType.Size() > found.Size() {
				found = leaf.DType
			}
		}
	}
	return found, found != hlo.Invalid
}

// logAbs is log|x + iy| as log m + ½·log1p((n/m)²), m and n the larger and smaller
// magnitude, so that |z| is never formed: it would overflow f32 above 2^128 where
// cpuref's f64 does not. In f64, math/cmplx (cpuref's c128) takes log(abs z),
// +inf where abs z overflows: the kernel follows it there. As log(hypot): +inf if a part is infinite, NaN if one is
// NaN, −inf at 0.
func (k *kernel) logAbs(x, y spirv.ID) spirv.ID {
	f := k.f
	ax, ay := f.GLSL(spirv.GLSLFAbs, x), f.GLSL(spirv.GLSLFAbs, y)
	bigger := f.Greater(ax, ay)
	m, n := f.Select(bigger, ax, ay), f.Select(bigger, ay, ax)
	zero := k.partConst(0)
	r := f.Select(f.Equal(m, zero), zero, k.exact(f.FDiv(n, m)))
	v := k.exact(f.FAdd(k.log(m), k.exact(f.FMul(k.partConst(0.5), k.log1p(k.exact(f.FMul(r, r)))))))
	v = f.Select(f.LogicalOr(f.IsNan(x), f.IsNan(y)), k.partConst(math.NaN()), v)
	v = f.Select(f.LogicalOr(f.IsInf(x), f.IsInf(y)), k.partConst(math.Inf(1)), v)
	if k.part == hlo.F64 { // math/cmplx's log|z| is +inf where |z| overflows f64; so is cpuref's
		v = f.Select(f.IsInf(k.hypot(x, y)), k.partConst(math.Inf(1)), v)
	}
	return v
}

// complexExp is e^x·(cos y + i·sin y) with math/cmplx's special cases: exp(+inf ±
// 0i) is the operand, exp(±inf + i·(inf or NaN)) is ±0·… for −inf and inf + NaN·i
// for +inf, exp(NaN ± 0i) keeps the zero. Within f32's exp and sine/cosine
// accuracy of cpuref's f64 result, but for a real part above ln(f32 max) with a
// cosine or sine small enough to bring the product back in range, which is inf
// here and finite in cpuref.
func (k *kernel) complexExp(z spirv.ID) spirv.ID {
	f := k.f
	re, im := k.parts(z)
	r := k.exp(re)
	v := k.makeComplex(k.exact(f.FMul(r, k.sinCos(im, true))), k.exact(f.FMul(r, k.sinCos(im, false))))
	zero, nan, inf := k.partConst(0), k.partConst(math.NaN()), k.partConst(math.Inf(1))
	imZero := f.Equal(im, zero)
	infRe, negRe := f.IsInf(re), f.Less(re, zero)
	v = f.Select(f.LogicalAnd(f.IsNan(re), imZero), k.makeComplex(nan, im), v)
	atInf := f.Select(negRe, k.makeComplex(zero, k.copySign(zero, im)), k.makeComplex(inf, nan))
	v = f.Select(f.LogicalAnd(infRe, f.LogicalOr(f.IsInf(im), f.IsNan(im))), atInf, v)
	return f.Select(f.LogicalAnd(infRe, f.LogicalAnd(f.LogicalNot(negRe), imZero)), z, v)
}
