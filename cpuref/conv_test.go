package cpuref

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// conv1D convolves x = [1 2 3 4 5] (batch 1, feature 1) with kernel [1 2 3]. XLA's
// convolution is a cross-correlation: out[i] = Σ_k x[i*stride + k*dil - pad] w[k].
func conv1D(t *testing.T, window string, outLen int64) *hlo.Literal {
	t.Helper()
	return evalText(t, oneOp(`
  x = f32[1,1,5] parameter(0)
  w = f32[1,1,3] parameter(1)
  ROOT c = f32[1,1,`+itoa(outLen)+`] convolution(x, w), window={`+window+`}, dim_labels=bf0_oi0->bf0`),
		mat(dims(1, 1, 5), float32(1), 2, 3, 4, 5), mat(dims(1, 1, 3), float32(1), 2, 3))
}

func TestConvolution1D(t *testing.T) {
	row := func(v ...float32) *hlo.Literal { return mat(dims(1, 1, int64(len(v))), v...) }
	// 1+4+9, 2+6+12, 3+8+15.
	assertLit(t, row(14, 20, 26), conv1D(t, "size=3", 3))
	assertLit(t, row(14, 26), conv1D(t, "size=3 stride=2", 2))
	// Zero padding: [0 1 2]·w = 8, …, [4 5 0]·w = 14.
	assertLit(t, row(8, 14, 20, 26, 14), conv1D(t, "size=3 pad=1_1", 5))
	// rhs (window) dilation 2: taps at 0, 2, 4: 1 + 6 + 15.
	assertLit(t, row(22), conv1D(t, "size=3 rhs_dilate=2", 1))
	// lhs (base) dilation 2: 1 _ 2 _ 3 _ 4 _ 5 with holes as zeros.
	assertLit(t, row(7, 4, 11, 6, 15, 8, 19), conv1D(t, "size=3 lhs_dilate=2", 7))
	// Reversed window: kernel [3 2 1].
	assertLit(t, row(10, 16, 22), conv1D(t, "size=3 rhs_reversal=1", 3))
	// Negative padding crops: [2 3 4]·w, [3 4 5]·w.
	assertLit(t, row(20, 26), conv1D(t, "size=3 pad=-1_0", 2))
}

func TestConvolution2DNHWC(t *testing.T) {
	x := mat(dims(1, 3, 3, 1), seq(9, 1)...)
	w := mat(dims(2, 2, 1, 1), float32(1), 1, 1, 1)
	// Sums of 2×2 blocks of [1 2 3; 4 5 6; 7 8 9].
	assertLit(t, mat(dims(1, 2, 2, 1), float32(12), 16, 24, 28), evalText(t, oneOp(`
  x = f32[1,3,3,1] parameter(0)
  w = f32[2,2,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f`), x, w))
	// Stride 2 with padding 1 on each side: corners of the padded 5×5 grid.
	assertLit(t, mat(dims(1, 2, 2, 1), float32(1), 5, 11, 28), evalText(t, oneOp(`
  x = f32[1,3,3,1] parameter(0)
  w = f32[2,2,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(x, w), window={size=2x2 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f`), x, w))
}

func TestConvolutionFeatures(t *testing.T) {
	// Two input features c0 = [1 2 3], c1 = [4 5 6]; out0 = c0 + c1, out1 = c0 - c1.
	x := mat(dims(1, 2, 3), float32(1), 2, 3, 4, 5, 6)
	w := mat(dims(2, 2, 1), float32(1), 1, 1, -1)
	assertLit(t, mat(dims(1, 2, 3), float32(5), 7, 9, -3, -3, -3), evalText(t, oneOp(`
  x = f32[1,2,3] parameter(0)
  w = f32[2,2,1] parameter(1)
  ROOT c = f32[1,2,3] convolution(x, w), window={size=1}, dim_labels=bf0_oi0->bf0`), x, w))
	// The same with features minor (b0f input, 0io kernel, b0f output).
	xT := mat(dims(1, 3, 2), float32(1), 4, 2, 5, 3, 6)
	wT := mat(dims(1, 2, 2), float32(1), 1, 1, -1) // w[0][i][o]
	assertLit(t, mat(dims(1, 3, 2), float32(5), -3, 7, -3, 9, -3), evalText(t, oneOp(`
  x = f32[1,3,2] parameter(0)
  w = f32[1,2,2] parameter(1)
  ROOT c = f32[1,3,2] convolution(x, w), window={size=1}, dim_labels=b0f_0io->b0f`), xT, wT))
}

func TestConvolutionDepthwise(t *testing.T) {
	x := mat(dims(1, 2, 3), float32(1), 2, 3, 4, 5, 6)
	// feature_group_count=2: out0 = c0 ⋆ [1 1] = [3 5], out1 = c1 ⋆ [1 -1] = [-1 -1].
	assertLit(t, mat(dims(1, 2, 2), float32(3), 5, -1, -1), evalText(t, oneOp(`
  x = f32[1,2,3] parameter(0)
  w = f32[2,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, w), window={size=2}, dim_labels=bf0_oi0->bf0, feature_group_count=2`),
		x, mat(dims(2, 1, 2), float32(1), 1, 1, -1)))
	// Channel multiplier 2: outputs 0,1 read c0, outputs 2,3 read c1.
	w := mat(dims(4, 1, 2), float32(1), 0, 0, 1, 1, 1, 2, 0)
	assertLit(t, mat(dims(1, 4, 2), float32(1), 2, 2, 3, 9, 11, 8, 10), evalText(t, oneOp(`
  x = f32[1,2,3] parameter(0)
  w = f32[4,1,2] parameter(1)
  ROOT c = f32[1,4,2] convolution(x, w), window={size=2}, dim_labels=bf0_oi0->bf0, feature_group_count=2`), x, w))
}

func TestConvolutionBatchGroups(t *testing.T) {
	// batch_group_count=2: output feature 0 reads batch 0, feature 1 reads batch 1.
	x := mat(dims(2, 1, 3), float32(1), 2, 3, 4, 5, 6)
	w := mat(dims(2, 1, 1), float32(1), 10)
	assertLit(t, mat(dims(1, 2, 3), float32(1), 2, 3, 40, 50, 60), evalText(t, oneOp(`
  x = f32[2,1,3] parameter(0)
  w = f32[2,1,1] parameter(1)
  ROOT c = f32[1,2,3] convolution(x, w), window={size=1}, dim_labels=bf0_oi0->bf0, batch_group_count=2`), x, w))
}

func TestConvolutionIntegerAndHalf(t *testing.T) {
	assertLit(t, mat(dims(1, 1, 2), int32(-1), -1), evalText(t, oneOp(`
  x = s32[1,1,3] parameter(0)
  w = s32[1,1,2] parameter(1)
  ROOT c = s32[1,1,2] convolution(x, w), window={size=2}, dim_labels=bf0_oi0->bf0`),
		mat(dims(1, 1, 3), int32(1), 2, 3), mat(dims(1, 1, 2), int32(1), -1)))
	// bf16 accumulates in f32: 1 + 1/256 + 1/256 = 1.0078125 exactly in bf16, while
	// bf16 running sums would tie back to 1 at each step.
	x := bf16s(1, 1.0/256, 1.0/256)
	out := evalText(t, oneOp(`
  x = bf16[1,1,3] parameter(0)
  w = bf16[1,1,3] parameter(1)
  ROOT c = bf16[1,1,1] convolution(x, w), window={size=3}, dim_labels=bf0_oi0->bf0`),
		mustReshape(t, x, 1, 1, 3), mustReshape(t, bf16s(1, 1, 1), 1, 1, 3))
	assertLit(t, mustReshape(t, bf16s(1.0078125), 1, 1, 1), out)
}

func mustReshape(t *testing.T, l *hlo.Literal, d ...int64) *hlo.Literal {
	t.Helper()
	out, err := hlo.LiteralFromBytes(hlo.MakeShape(l.DType(), d...), append([]byte(nil), l.Bytes()...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
