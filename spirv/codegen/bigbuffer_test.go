package codegen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Buffers larger than one binding, under a simulated target whose bindings cover
// only 1 KiB, so that both ways of reaching them (device address, split bindings)
// are exercised by every strategy on small shapes. Each kernel validates
// (spirv-val) and its layout is checked; the differential tests on lavapipe run
// the same paths at 2–3× the real 128 MiB limit (bigtensor_test.go in the root).

const tinyBinding = 1 << 10

// tinyTarget is lavapipe with bindings of 1 KiB, with or without device addresses.
func tinyTarget(addresses bool) Target {
	t := LavapipeTarget()
	t.MaxStorageBufferRange = tinyBinding
	t.BufferDeviceAddress = addresses
	t.MaxStorageBuffers = 0 // the split samples need more than 32 bindings
	return t
}

// bigSamples are kernel computations with inputs, outputs or scratch buffers above
// 1 KiB, one per strategy the differential tests run large.
func bigSamples(t *testing.T) map[string]*hlo.Computation {
	out := map[string]*hlo.Computation{
		"add_vec4":    addComp(t, hlo.F32, 32, 64),
		"add_u8":      addComp(t, hlo.U8, 3001),
		"reduce_loop": reduceComp(t, hlo.F32, []int64{64, 64}, []int64{1}, hlo.OpAdd),
		"reduce_tree": reduceComp(t, hlo.F32, []int64{4, 2048}, []int64{1}, hlo.OpAdd),
		"reduce_2pas": reduceComp(t, hlo.F32, []int64{1, 20000}, []int64{1}, hlo.OpMaximum),
		"scatter_add": scatterComp(t, hlo.S32, 100, 50, hlo.OpAdd, false),
		"scatter_unq": scatterComp(t, hlo.F32, 100, 50, hlo.OpAdd, true),
		"scatter_ser": scatterComp(t, hlo.F32, 100, 50, hlo.OpAdd, false),
	}
	dot := func(name string, dt hlo.DType, m, k, n int64) {
		b := newCB(t, name)
		dd := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
		out[name] = b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, b.param(s(dt, m, k)), b.param(s(dt, k, n))))
	}
	dot("dot_gemm", hlo.F32, 64, 8, 64)
	dot("dot_s32", hlo.S32, 40, 8, 40)
	b := newCB(t, "transpose")
	out["transpose"] = b.build(b.op(hlo.OpTranspose, hlo.Attributes{Dimensions: []int64{1, 0}}, nil, b.param(s(hlo.F32, 40, 30))))
	b = newCB(t, "slice")
	out["slice"] = b.build(b.op(hlo.OpSlice, hlo.Attributes{Slice: []hlo.SliceDim{{Start: 1, Limit: 999, Stride: 2}}}, nil, b.param(s(hlo.F32, 1000))))
	b = newCB(t, "gather")
	gd := &hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}
	out["gather"] = b.build(b.op(hlo.OpGather, hlo.Attributes{Gather: gd, SliceSizes: []int64{1, 4}}, nil, b.param(s(hlo.F32, 300, 4)), b.param(s(hlo.S32, 400))))
	b = newCB(t, "dus")
	out["dus"] = b.build(b.simple(hlo.OpDynamicUpdateSlice, b.param(s(hlo.F32, 1000)), b.param(s(hlo.F32, 300)), b.param(s(hlo.S32))))
	b = newCB(t, "sort")
	out["sort"] = b.build(b.op(hlo.OpSort, hlo.Attributes{Dimensions: []int64{0}}, []*hlo.Computation{compareComp(t, hlo.CmpLT, hlo.F32)}, b.param(s(hlo.F32, 600))))
	b = newCB(t, "conv")
	w := []hlo.WindowDim{hlo.NewWindowDim(3), hlo.NewWindowDim(3)}
	out["conv"] = b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w}, nil,
		b.param(s(hlo.F32, 1, 20, 20, 2)), b.param(s(hlo.F32, 3, 3, 2, 4))))
	return out
}

// TestBigBuffers lowers every sample both ways: each kernel validates, every
// argument above one binding is reached by address (with device addresses) or
// split into 1 KiB pieces (without), and the others are bound whole.
func TestBigBuffers(t *testing.T) {
	for _, addresses := range []bool{true, false} {
		target := tinyTarget(addresses)
		for name, c := range bigSamples(t) {
			t.Run(fmt.Sprintf("addresses=%v/%s", addresses, name), func(t *testing.T) {
				p := lowerFor(t, c, target)
				big := 0
				for _, d := range p.Dispatches {
					for i, a := range d.Args {
						bytes := p.argBytes(a)
						lay := d.Kernel.Layout[i]
						switch {
						case bytes <= tinyBinding:
							require.Equal(t, PathBinding, lay.Path, "%s %v (%d bytes)", d.Kernel.Name, a, bytes)
							require.Equal(t, 1, lay.Pieces)
						case addresses:
							big++
							require.Equal(t, PathAddress, lay.Path, "%s %v (%d bytes)", d.Kernel.Name, a, bytes)
						default:
							big++
							require.Equal(t, PathSplit, lay.Path, "%s %v (%d bytes)", d.Kernel.Name, a, bytes)
							require.Equal(t, int((bytes+tinyBinding-1)/tinyBinding), lay.Pieces)
						}
					}
				}
				require.Positive(t, big, "the sample has an argument above one binding")
			})
		}
	}
}

// TestPath: the rule the kernels and the planner share.
func TestPath(t *testing.T) {
	target := LavapipeTarget()
	require.Equal(t, PathBinding, target.Path(128<<20))
	require.Equal(t, PathAddress, target.Path(128<<20+1))
	target.Int64 = false // addresses are 64-bit integers
	require.Equal(t, PathSplit, target.Path(128<<20+1))
	target = LavapipeTarget()
	target.BufferDeviceAddress = false
	require.Equal(t, PathSplit, target.Path(3<<30))
	require.Equal(t, int64(128<<20), target.SplitBytes())
	target.MaxStorageBufferRange = 1000
	require.Equal(t, int64(768), target.SplitBytes(), "a multiple of SplitGranule")
	target.MaxStorageBufferRange = 0 // no limit known
	require.Equal(t, PathBinding, target.Path(3<<30))
}

// TestBindings: one binding up to the range, one per 128 MiB piece when split
// (24 pieces for 3 GiB, 2 for one byte over), none when reached by address.
func TestBindings(t *testing.T) {
	target := LavapipeTarget()
	require.Equal(t, 1, target.Bindings(4))
	require.Equal(t, 1, target.Bindings(128<<20))
	require.Equal(t, 0, target.Bindings(128<<20+1))
	target.BufferDeviceAddress = false
	require.Equal(t, 2, target.Bindings(128<<20+1))
	require.Equal(t, 24, target.Bindings(3<<30))
	target.MaxStorageBufferRange = 100 // below the split granule: the kernel is refused, counted whole
	require.Equal(t, 1, target.Bindings(1000))
}
