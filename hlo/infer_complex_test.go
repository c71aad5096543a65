package hlo

import "testing"

func c64(dims ...int64) Shape  { return MakeShape(C64, dims...) }
func c128(dims ...int64) Shape { return MakeShape(C128, dims...) }

func TestInferComplexElementwise(t *testing.T) {
	f64 := func(dims ...int64) Shape { return MakeShape(F64, dims...) }
	runInferCases(t, []inferCase{
		{name: "complex f32", op: OpComplex, operands: shp(f32(2, 3), f32(2, 3)), want: c64(2, 3)},
		{name: "complex f64", op: OpComplex, operands: shp(f64(4), f64(4)), want: c128(4)},
		{name: "complex f16", op: OpComplex, operands: shp(MakeShape(F16, 2), MakeShape(F16, 2)), err: "not f32 or f64"},
		{name: "complex mixed", op: OpComplex, operands: shp(f32(2), f64(2)), err: "differ"},
		{name: "complex of complex", op: OpComplex, operands: shp(c64(2), c64(2)), err: "not f32 or f64"},
		{name: "real", op: OpReal, operands: shp(c64(2, 3)), want: f32(2, 3)},
		{name: "imag", op: OpImag, operands: shp(c128(5)), want: f64(5)},
		{name: "real of real", op: OpReal, operands: shp(f32(2)), want: f32(2)},
		{name: "real of int", op: OpReal, operands: shp(s32(2)), err: "not a floating-point or complex type"},
		{name: "abs is real", op: OpAbs, operands: shp(c64(3)), want: f32(3)},
		{name: "sign keeps type", op: OpSign, operands: shp(c64(3)), want: c64(3)},
		{name: "exp", op: OpExp, operands: shp(c128(3)), want: c128(3)},
		{name: "add", op: OpAdd, operands: shp(c64(3), c64(3)), want: c64(3)},
		{name: "power", op: OpPower, operands: shp(c64(3), c64(3)), want: c64(3)},
		{name: "add mixed", op: OpAdd, operands: shp(c64(3), c128(3)), err: "differ"},
		{name: "maximum", op: OpMaximum, operands: shp(c64(3), c64(3)), err: "not a numeric or pred type"},
		{name: "remainder", op: OpRemainder, operands: shp(c64(3), c64(3)), err: "not a numeric type"},
		{name: "atan2", op: OpAtan2, operands: shp(c64(3), c64(3)), err: "not a floating-point type"},
		{name: "logistic", op: OpLogistic, operands: shp(c64(3)), err: "not a floating-point type"},
		{name: "is-finite", op: OpIsFinite, operands: shp(c64(3)), err: "not a floating-point type"},
		{name: "compare EQ", op: OpCompare, operands: shp(c64(3), c64(3)), attrs: Attributes{Direction: CmpNE}, want: pred(3)},
		{name: "compare LT", op: OpCompare, operands: shp(c64(3), c64(3)), attrs: Attributes{Direction: CmpLT}, err: "EQ and NE only"},
		{name: "compare total order", op: OpCompare, operands: shp(c64(3), c64(3)),
			attrs: Attributes{Direction: CmpEQ, CompareType: CompareTotalOrder}, err: "does not apply to c64"},
		{name: "clamp", op: OpClamp, operands: shp(c64(), c64(3), c64()), err: "unordered"},
		{name: "convert real to complex", op: OpConvert, operands: shp(s32(3)), declared: ptr(c64(3))},
		{name: "convert c64 to c128", op: OpConvert, operands: shp(c64(3)), declared: ptr(c128(3))},
		{name: "convert complex to real", op: OpConvert, operands: shp(c64(3)), declared: ptr(f32(3)), err: "take real or imag"},
		{name: "select", op: OpSelect, operands: shp(pred(3), c64(3), c64(3)), want: c64(3)},
	})
}

func TestInferComplexContraction(t *testing.T) {
	mm := Attributes{Dot: &DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}}
	batched := Attributes{Dot: &DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0},
		LhsContracting: []int64{2}, RhsContracting: []int64{1}}}
	conv := Attributes{Conv: &ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: []int64{2},
		KernelOutput: 0, KernelInput: 1, KernelSpatial: []int64{2},
		OutputBatch: 0, OutputFeature: 1, OutputSpatial: []int64{2}},
		Window: []WindowDim{NewWindowDim(2)}, FeatureGroupCount: 1, BatchGroupCount: 1}
	runInferCases(t, []inferCase{
		{name: "c64 matmul", op: OpDot, operands: shp(c64(2, 3), c64(3, 4)), attrs: mm, want: c64(2, 4)},
		{name: "c128 batched", op: OpDot, operands: shp(c128(5, 2, 3), c128(5, 3, 4)), attrs: batched, want: c128(5, 2, 4)},
		{name: "c64 declared", op: OpDot, operands: shp(c64(2, 3), c64(3, 4)), attrs: mm, declared: ptr(c64(2, 4))},
		{name: "real and complex", op: OpDot, operands: shp(f32(2, 3), c64(3, 4)), attrs: mm, err: "differ"},
		{name: "c64 and c128", op: OpDot, operands: shp(c64(2, 3), c128(3, 4)), attrs: mm, err: "differ"},
		{name: "c64 widened to c128", op: OpDot, operands: shp(c64(2, 3), c64(3, 4)), attrs: mm, declared: ptr(c128(2, 4)), err: "not a widening"},
		{name: "c64 to real", op: OpDot, operands: shp(c64(2, 3), c64(3, 4)), attrs: mm, declared: ptr(f32(2, 4)), err: "not a widening"},
		{name: "c64 convolution", op: OpConvolution, operands: shp(c64(1, 2, 5), c64(3, 2, 2)), attrs: conv, want: c64(1, 3, 4)},
		{name: "real and complex convolution", op: OpConvolution, operands: shp(f32(1, 2, 5), c64(3, 2, 2)), attrs: conv, err: "differ"},
	})
}

func TestInferFft(t *testing.T) {
	fft := func(typ FftType, n ...int64) Attributes { return Attributes{FftType: typ, FftLength: n} }
	f64 := func(dims ...int64) Shape { return MakeShape(F64, dims...) }
	runInferCases(t, []inferCase{
		{name: "FFT", op: OpFft, operands: shp(c64(3, 8)), attrs: fft(FFT, 8), want: c64(3, 8)},
		{name: "IFFT 2-D", op: OpFft, operands: shp(c128(3, 4, 8)), attrs: fft(IFFT, 4, 8), want: c128(3, 4, 8)},
		{name: "RFFT", op: OpFft, operands: shp(f32(2, 8)), attrs: fft(RFFT, 8), want: c64(2, 5)},
		{name: "RFFT odd", op: OpFft, operands: shp(f64(7)), attrs: fft(RFFT, 7), want: c128(4)},
		{name: "RFFT 3-D", op: OpFft, operands: shp(f32(2, 3, 4)), attrs: fft(RFFT, 2, 3, 4), want: c64(2, 3, 3)},
		{name: "IRFFT", op: OpFft, operands: shp(c64(2, 5)), attrs: fft(IRFFT, 8), want: f32(2, 8)},
		{name: "IRFFT odd", op: OpFft, operands: shp(c64(4, 4)), attrs: fft(IRFFT, 3, 7), err: "must be {3,4}"},
		{name: "IRFFT 2-D", op: OpFft, operands: shp(c128(3, 4)), attrs: fft(IRFFT, 3, 7), want: f64(3, 7)},
		{name: "FFT of real", op: OpFft, operands: shp(f32(8)), attrs: fft(FFT, 8), err: "FFT takes c64 or c128, not f32"},
		{name: "RFFT of complex", op: OpFft, operands: shp(c64(8)), attrs: fft(RFFT, 8), err: "RFFT takes f32 or f64"},
		{name: "RFFT of f16", op: OpFft, operands: shp(MakeShape(F16, 8)), attrs: fft(RFFT, 8), err: "RFFT takes f32 or f64"},
		{name: "IRFFT of real", op: OpFft, operands: shp(f32(5)), attrs: fft(IRFFT, 8), err: "IRFFT takes c64 or c128"},
		{name: "length mismatch", op: OpFft, operands: shp(c64(3, 8)), attrs: fft(FFT, 4), err: "must be {4}"},
		{name: "RFFT length mismatch", op: OpFft, operands: shp(f32(5)), attrs: fft(RFFT, 8), err: "must be {8}"},
		{name: "no lengths", op: OpFft, operands: shp(c64(3)), attrs: fft(FFT), err: "has 0 entries"},
		{name: "four lengths", op: OpFft, operands: shp(c64(1, 1, 1, 1)), attrs: fft(FFT, 1, 1, 1, 1), err: "has 4 entries"},
		{name: "rank too small", op: OpFft, operands: shp(c64(4)), attrs: fft(FFT, 2, 4), err: "fewer than the 2 dimensions"},
		{name: "negative", op: OpFft, operands: shp(c64(4)), attrs: fft(FFT, -4), err: "negative"},
		{name: "unknown type", op: OpFft, operands: shp(c64(4)), attrs: fft(9, 4), err: "unknown fft_type ffttype(9)"},
		{name: "empty", op: OpFft, operands: shp(c64(0)), attrs: fft(FFT, 0), want: c64(0)},
	})
}

func TestFftTypeText(t *testing.T) {
	for _, typ := range []FftType{FFT, IFFT, RFFT, IRFFT} {
		got, err := ParseFftType(typ.String())
		if err != nil || got != typ {
			t.Errorf("ParseFftType(%q) = %v, %v", typ.String(), got, err)
		}
	}
	// XLA's parser reads the proto enum's names, case and all.
	if _, err := ParseFftType("rfft"); err == nil {
		t.Error("ParseFftType(rfft) accepted a lower-case name")
	}
}
