package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// c128 values. Most kernels move elements as 64-bit words (bulk.go), which a
// 16-byte c128 element does not fit. The elementwise complex kernels and fft read
// c128 through hlo.Literal's complex accessors, and so do dot and convolution; the data-movement kernels run twice
// on a c128 value taken apart into its real and imaginary f64 planes, and the
// planes' results are joined again (movement moves the parts of an element
// together, so each plane moves alike); reduce, reduce-window, scatter,
// select-and-scatter, sort and map call their computations on scalar literals
// (reduce_wide.go's literalFn); every other kernel refuses c128 with an error wrapping
// hlo.ErrUnsupported rather than reading half of each element.

// wideKernels are the ops whose own kernels handle c128: the elementwise ops that
// take complex operands, and the ops that pass whole values along.
var wideKernels = map[hlo.Opcode]bool{
	hlo.OpParameter: true, hlo.OpConstant: true, hlo.OpTuple: true, hlo.OpGetTupleElement: true,
	hlo.OpCall: true, hlo.OpFusion: true, hlo.OpWhile: true, hlo.OpConditional: true,
	hlo.OpOptBarrier: true, hlo.OpCompare: true, hlo.OpConvert: true, hlo.OpComplex: true,
	hlo.OpFft: true, hlo.OpBitcastConvert: true, // bitcast-convert copies bytes
	// A complex dot or convolution reads its operands through the complex
	// accessors (dot_complex.go).
	hlo.OpDot: true, hlo.OpConvolution: true,
}

// planarKernels are the data-movement ops evaluated plane by plane on c128.
var planarKernels = []hlo.Opcode{
	hlo.OpBroadcast, hlo.OpReshape, hlo.OpTranspose, hlo.OpSlice, hlo.OpConcatenate,
	hlo.OpPad, hlo.OpReverse, hlo.OpCopy, hlo.OpDynamicSlice, hlo.OpDynamicUpdateSlice,
	hlo.OpGather, hlo.OpSelect,
}

// wideAlternatives are the kernels of ops on c128 values that their own kernels
// cannot take.
var wideAlternatives = map[hlo.Opcode]kernel{
	hlo.OpReduce: evalReduceWide, hlo.OpReduceWindow: evalReduceWindowWide, hlo.OpScatter: evalScatterWide,
	hlo.OpSelectAndScatter: evalSelectAndScatterWide, hlo.OpSort: evalSortWide, hlo.OpMap: evalMapWide,
}

// wrapWideKernels makes the movement kernels planar on c128, sends c128 reduces to
// their own kernel, and makes every other kernel that does not handle c128 refuse
// it. It runs once the kernel table is filled.
func wrapWideKernels() {
	planar := map[hlo.Opcode]bool{}
	for _, op := range planarKernels {
		planar[op] = true
		kernels[op] = planarKernel(kernels[op])
	}
	for op, k := range kernels {
		kind := op.Info().Kind
		if wideKernels[op] || planar[op] || kind == hlo.KindUnary || kind == hlo.KindBinary {
			continue
		}
		if alt, ok := wideAlternatives[op]; ok {
			kernels[op] = orWide(k, alt)
			continue
		}
		kernels[op] = refuseWide(k)
	}
}

// orWide runs wide on instructions with c128 values and k on the others.
func orWide(k, wide kernel) kernel {
	return func(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
		if holdsC128(in, ops) {
			return wide(ev, in, ops)
		}
		return k(ev, in, ops)
	}
}

// holdsC128 reports whether in's result or an operand value has c128 elements.
func holdsC128(in *hlo.Instruction, ops []*hlo.Literal) bool {
	for _, leaf := range in.Shape.Leaves() {
		if leaf.DType == hlo.C128 {
			return true
		}
	}
	for _, o := range ops {
		for _, leaf := range o.Leaves() {
			if leaf.DType() == hlo.C128 {
				return true
			}
		}
	}
	return false
}

func refuseWide(k kernel) kernel {
	return func(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
		if holdsC128(in, ops) {
			return nil, errWideElements(in.Op.String(), hlo.C128)
		}
		return k(ev, in, ops)
	}
}

// planarKernel runs k on the real and the imaginary f64 planes of the c128
// operands (the others, such as indices and select's predicate, as they are) and
// joins the two results.
func planarKernel(k kernel) kernel {
	return func(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
		if !holdsC128(in, ops) {
			return k(ev, in, ops)
		}
		if !in.Shape.IsArray() || in.Shape.DType != hlo.C128 {
			return nil, fmt.Errorf("%v of c128 operands must have a c128 array result, not %v", in.Op, in.Shape)
		}
		var planes [2]*hlo.Literal
		for p := range planes {
			sub := *in // the instruction with an f64 result, for this plane
			sub.Shape = in.Shape.WithDType(hlo.F64)
			args := make([]*hlo.Literal, len(ops))
			for i, o := range ops {
				args[i] = o
				if o.Shape().IsArray() && o.DType() == hlo.C128 {
					args[i] = c128Plane(o, p)
				}
			}
			out, err := k(ev, &sub, args)
			if err != nil {
				return nil, err
			}
			planes[p] = out
		}
		return joinPlanes(in.Shape, planes[0], planes[1])
	}
}

// c128Plane is the real (p = 0) or imaginary (p = 1) part of a c128 literal, as f64.
func c128Plane(l *hlo.Literal, p int) *hlo.Literal {
	out := hlo.NewLiteral(l.Shape().WithDType(hlo.F64))
	b, o := l.Bytes(), out.Bytes()
	for i := 0; i < out.NumElements(); i++ {
		copy(o[8*i:8*i+8], b[16*i+8*p:16*i+8*p+8])
	}
	return out
}

// joinPlanes makes a c128 literal of shape s from its real and imaginary planes.
func joinPlanes(s hlo.Shape, re, im *hlo.Literal) (*hlo.Literal, error) {
	want := s.WithDType(hlo.F64)
	if !re.Shape().Equal(want) || !im.Shape().Equal(want) {
		return nil, fmt.Errorf("planes %v and %v do not make %v", re.Shape(), im.Shape(), s)
	}
	out := hlo.NewLiteral(s)
	o, rb, ib := out.Bytes(), re.Bytes(), im.Bytes()
	for i := 0; i < out.NumElements(); i++ {
		copy(o[16*i:16*i+8], rb[8*i:8*i+8])
		copy(o[16*i+8:16*i+16], ib[8*i:8*i+8])
	}
	return out, nil
}
