package vkxla_test

// Tensors larger than one storage-buffer binding (lavapipe's maxStorageBufferRange
// is 128 MiB): each test runs a module whose big tensors are about 2× that, on
// both paths — read through buffer device addresses (lavapipe's default) and split
// across bindings (WithSplitBindings, the path of devices without addresses) — and
// compares every output with cpuref. They are the slowest device tests, so each is
// one kernel on integers (cpuref's float arithmetic costs about ten times its
// integer arithmetic per element), with a deadline of its own.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/targets"
)

// bindingLimit is lavapipe's maxStorageBufferRange. Big tensors are 2.125× it: two
// whole bindings and part of a third when split.
const (
	bindingLimit = 128 << 20
	bigBytes     = 2*bindingLimit + bindingLimit/8
)

// bigDeadline bounds one path of one test (compile, run and the cpuref check).
const bigDeadline = 3 * time.Minute

// bigPaths are the two ways kernels reach a big tensor, as compile options.
var bigPaths = []struct {
	name string
	opts []vkxla.CompileOption
}{
	{"address", nil},
	{"split", []vkxla.CompileOption{vkxla.WithSplitBindings()}},
}

// checkBig runs m on both paths and compares the outputs with want (cpuref's,
// computed once) within spec. It first checks, device-free (PlanFor for the
// built-in lavapipe profile), that every buffer above one binding takes the path
// asked for and that there is one.
func checkBig(t *testing.T, m *hlo.Module, spec vkxla.ErrorSpec, inputs ...*hlo.Literal) {
	t.Helper()
	rt := newRuntime(t)
	require.True(t, rt.Device().Caps().BufferDeviceAddress, "lavapipe has buffer device addresses")
	start := time.Now()
	want, err := cpuref.Eval(m, inputs...)
	require.NoError(t, err, "cpuref")
	t.Logf("cpuref: %v", time.Since(start))
	for _, path := range bigPaths {
		t.Run(path.name, func(t *testing.T) {
			requireBigPath(t, m, path.opts, path.name)
			ctx, cancel := context.WithTimeout(context.Background(), bigDeadline)
			defer cancel()
			start := time.Now()
			exe, err := rt.Compile(ctx, m, append([]vkxla.CompileOption{vkxla.WithoutCache()}, path.opts...)...)
			require.NoError(t, err, "compile")
			defer func() { require.NoError(t, exe.Close()) }()
			got, err := exe.Run(ctx, inputs...)
			require.NoError(t, err, "run")
			t.Logf("compile and run: %v", time.Since(start))
			wantLeaves := want.Leaves()
			require.Len(t, got, len(wantLeaves))
			for i := range got {
				require.NoError(t, spec.Check(got[i], wantLeaves[i]), "output %d", i)
			}
		})
	}
}

// requireBigPath: planned for lavapipe with opts, some buffer is larger than one
// binding, and every such buffer is reached by path ("address" or "split").
func requireBigPath(t *testing.T, m *hlo.Module, opts []vkxla.CompileOption, path string) {
	t.Helper()
	lavapipe, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	p, err := vkxla.PlanFor(context.Background(), m, lavapipe, "", opts...)
	require.NoError(t, err)
	big := 0
	for _, r := range p.Arena().Ranges {
		if r.Size <= bindingLimit {
			continue
		}
		big++
		require.Equal(t, path == "address", r.Addressed, "%v", r)
		require.Equal(t, path == "split", r.Split, "%v", r)
	}
	require.Positive(t, big, "no buffer above one binding in\n%s", p)
}

// parseBig parses a module written with %d for its big dimension.
func parseBig(t *testing.T, text string, dims ...any) *hlo.Module {
	t.Helper()
	m, err := hlo.ParseModule(fmt.Sprintf(text, dims...))
	require.NoError(t, err)
	return m
}

// smallInts is a literal of shape s (s32, s64; u8 wraps) with integer values in [-8, 8)
// from a multiplicative hash of the index and seed: no two nearby elements, rows
// or pieces alike, and quicker to make than random draws for 70M elements.
func smallInts(s hlo.Shape, seed uint64) *hlo.Literal {
	n := int(s.NumElements())
	val := func(i int) int64 { return int64((uint64(i)*0x9E3779B97F4A7C15+seed*0xBF58476D1CE4E5B9)>>40&15) - 8 }
	switch s.DType {
	case hlo.S32:
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(val(i))
		}
		return hlo.MustFromSlice(s.Dims, v)
	case hlo.S64:
		v := make([]int64, n)
		for i := range v {
			v[i] = val(i)
		}
		return hlo.MustFromSlice(s.Dims, v)
	case hlo.U8:
		v := make([]uint8, n)
		for i := range v {
			v[i] = uint8(val(i))
		}
		return hlo.MustFromSlice(s.Dims, v)
	}
	panic(fmt.Sprintf("smallInts: %v", s.DType))
}

// TestBigElementwise: x + y over s32[68M] (272 MiB in and out; the vec4 path),
// every element compared.
func TestBigElementwise(t *testing.T) {
	n := int64(bigBytes / 4)
	m := parseBig(t, `HloModule big_elementwise
ENTRY e {
  x = s32[%[1]d] parameter(0)
  y = s32[%[1]d] parameter(1)
  ROOT r = s32[%[1]d] add(x, y)
}`, n)
	s := hlo.MakeShape(hlo.S32, n)
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(s, 1), smallInts(s, 2))
}

// TestBigReduce: row sums of s64[4.25M, 8] (272 MiB in, 34 MiB out).
func TestBigReduce(t *testing.T) {
	rows := int64(bigBytes / 8 / 8)
	m := parseBig(t, `HloModule big_reduce
sum {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT c = s64[] add(a, b)
}
ENTRY e {
  x = s64[%[1]d,8] parameter(0)
  z = s64[] constant(0)
  ROOT r = s64[%[1]d] reduce(x, z), dimensions={1}, to_apply=sum
}`, rows)
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(hlo.MakeShape(hlo.S64, rows, 8), 3))
}

// TestBigDot: s64[8.5M, 4] · s64[4, 2] (272 MiB in, 136 MiB out: both beyond one
// binding); a contraction of 4 keeps it quick.
func TestBigDot(t *testing.T) {
	rows := int64(bigBytes / 8 / 4)
	m := parseBig(t, `HloModule big_dot
ENTRY e {
  x = s64[%[1]d,4] parameter(0)
  w = s64[4,2] parameter(1)
  ROOT r = s64[%[1]d,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, rows)
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(hlo.MakeShape(hlo.S64, rows, 4), 4), smallInts(hlo.MakeShape(hlo.S64, 4, 2), 5))
}

// spreadRows are n row indices spread over [0, rows) of rowBytes each: the rows on
// both sides of every 128 MiB piece boundary, the last row, and the rest spread
// over the table, so that every piece of a split table is read at its edges.
func spreadRows(n, rows, rowBytes int64) *hlo.Literal {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32((int64(i)*(rows-1)/(n-1) + int64(i)*7919) % rows)
	}
	at := 0
	for b := int64(bindingLimit); b < rows*rowBytes; b += bindingLimit {
		idx[at], idx[at+1] = int32(b/rowBytes-1), int32(b/rowBytes)
		at += 2
	}
	idx[n-1] = int32(rows - 1)
	return hlo.MustFromSlice([]int64{n, 1}, idx)
}

// TestBigGather: 1024 rows of a u8[17M, 16] table (272 MiB; 8-bit storage in
// every piece), from all over it.
func TestBigGather(t *testing.T) {
	rows := int64(bigBytes / 16)
	m := parseBig(t, `HloModule big_gather
ENTRY e {
  table = u8[%[1]d,16] parameter(0)
  idx = s32[1024,1] parameter(1)
  ROOT g = u8[1024,16] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
}`, rows)
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(hlo.MakeShape(hlo.U8, rows, 16), 6), spreadRows(1024, rows, 16))
}

// TestBigScatter: scatter-add of 1024 rows into an s32[4.25M, 16] table (272 MiB in
// and out; the atomic path), duplicates included.
func TestBigScatter(t *testing.T) {
	rows := int64(bigBytes / 4 / 16)
	m := parseBig(t, `HloModule big_scatter
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  table = s32[%[1]d,16] parameter(0)
  idx = s32[1024,1] parameter(1)
  upd = s32[1024,16] parameter(2)
  ROOT s = s32[%[1]d,16] scatter(table, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}`, rows)
	idx := spreadRows(1024, rows, 4*16)
	idx.SetInt64(10, idx.Int64(0)) // a duplicate: both updates add
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(hlo.MakeShape(hlo.S32, rows, 16), 7), idx, smallInts(hlo.MakeShape(hlo.S32, 1024, 16), 8))
}

// TestBigTranspose: s64[4352, 8192] transposed (272 MiB in and out).
func TestBigTranspose(t *testing.T) {
	rows := int64(bigBytes / 8 / 8192)
	m := parseBig(t, `HloModule big_transpose
ENTRY e {
  x = s64[%[1]d,8192] parameter(0)
  ROOT t = s64[8192,%[1]d] transpose(x), dimensions={1,0}
}`, rows)
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(hlo.MakeShape(hlo.S64, rows, 8192), 9))
}

// TestBigSlice: every other element of s64[34M] from the second (272 MiB in, 136
// MiB out).
func TestBigSlice(t *testing.T) {
	n := int64(bigBytes / 8)
	m := parseBig(t, `HloModule big_slice
ENTRY e {
  x = s64[%[1]d] parameter(0)
  ROOT s = s64[%[2]d] slice(x), slice={[1:%[1]d:2]}
}`, n, n/2)
	checkBig(t, m, vkxla.ErrorSpec{}, smallInts(hlo.MakeShape(hlo.S64, n), 10))
}

// TestBigTensorBeyondTheDevice: a tensor larger than the device's largest
// allocation (lavapipe: maxMemoryAllocationSize 2 GiB) cannot be reached by any path;
// Compile refuses it before allocating, naming the tensor, its size and the limit.
func TestBigTensorBeyondTheDevice(t *testing.T) {
	rt := newRuntime(t)
	m := parseBig(t, `HloModule huge
ENTRY e {
  x = f32[%[1]d] parameter(0)
  ROOT y = f32[%[1]d] negate(x)
}`, 600_000_000)
	limit := rt.Device().Caps().MaxMemoryAllocationSize
	require.Less(t, limit, int64(2_400_000_000))
	_, err := rt.Compile(context.Background(), m)
	require.ErrorIs(t, err, device.ErrOutOfDeviceMemory)
	require.Contains(t, err.Error(), fmt.Sprintf(`"x" of 2400000000 bytes is larger than the device's largest allocation (maxMemoryAllocationSize %d bytes)`, limit))
}

// TestBigDonated: a donated device tensor of 2.1× the binding limit, aliased to the
// output, is bound in place on both paths — its pool memory split across bindings
// or reached by its device address, as the arena's own ranges are (donate.go's
// placedRange) — and the output, which took its memory over, is x + y.
func TestBigDonated(t *testing.T) {
	n := int64(bigBytes / 4)
	m := parseBig(t, `HloModule big_donate, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY e {
  x = s32[%d] parameter(0)
  y = s32[%d] parameter(1)
  ROOT z = s32[%d] add(x, y)
}`, n, n, n)
	x, y := smallInts(hlo.MakeShape(hlo.S32, n), 1), smallInts(hlo.MakeShape(hlo.S32, n), 2)
	xs, _ := hlo.Values[int32](x)
	ys, _ := hlo.Values[int32](y)
	want := make([]int32, n)
	for i := range want {
		want[i] = xs[i] + ys[i]
	}
	rt := newRuntime(t)
	for _, path := range bigPaths {
		t.Run(path.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), bigDeadline)
			defer cancel()
			exe, err := rt.Compile(ctx, m, append([]vkxla.CompileOption{vkxla.WithoutCache()}, path.opts...)...)
			require.NoError(t, err, "compile")
			defer func() { require.NoError(t, exe.Close()) }()
			require.Zero(t, exe.MemoryStats().ParameterBytes-n*4, "y alone is the arena's parameter: x is donated")
			dx, err := rt.Upload(ctx, x)
			require.NoError(t, err)
			inUse := rt.MemoryStats().Tensors.BytesInUse
			outs, err := exe.RunOnDevice(ctx, dx, y)
			require.NoError(t, err, "run")
			require.Equal(t, inUse, rt.MemoryStats().Tensors.BytesInUse, "the output took x's memory over")
			_, err = dx.ToHost(ctx)
			require.ErrorIs(t, err, vkxla.ErrClosed, "x was donated")
			got, err := outs[0].ToHost(ctx)
			require.NoError(t, err)
			require.NoError(t, outs[0].Close())
			gs, _ := hlo.Values[int32](got)
			for i := range want {
				if gs[i] != want[i] {
					t.Fatalf("element %d = %d, want %d", i, gs[i], want[i])
				}
			}
		})
	}
}

// TestAddressTableMemory: the address tables count in the runtime's memory. An
// add of two s32 tensors one vec4 past the binding limit reaches its three
// arguments by address: one table of 3 × 8 = 24 bytes, in a buffer aligned to 16
// (lavapipe's minStorageBufferOffsetAlignment and vkxla's floor), so 32 bytes while
// the executable lives, none on the split path. Borrowing x records at the first
// run, for x's memory, a second table of the same size.
func TestAddressTableMemory(t *testing.T) {
	n := int64(bindingLimit/4 + 4)
	m := parseBig(t, `HloModule tables
ENTRY e {
  x = s32[%[1]d] parameter(0)
  y = s32[%[1]d] parameter(1)
  ROOT z = s32[%[1]d] add(x, y)
}`, n)
	rt := newRuntime(t)
	ctx := context.Background()
	for _, tc := range []struct {
		path  []vkxla.CompileOption
		bytes int64
	}{{nil, 32}, {[]vkxla.CompileOption{vkxla.WithSplitBindings()}, 0}} {
		exe, err := rt.Compile(ctx, m, append([]vkxla.CompileOption{vkxla.WithoutCache()}, tc.path...)...)
		require.NoError(t, err)
		st := rt.MemoryStats()
		require.Equal(t, tc.bytes, st.AddressTableBytes, st.String())
		require.Equal(t, exe.MemoryStats().PeakBytes+tc.bytes+st.Tensors.BytesReserved, st.TotalBytes(), st.String())
		require.NoError(t, exe.Close())
		require.Zero(t, rt.MemoryStats().AddressTableBytes, "freed with the executable")
	}

	exe, err := rt.Compile(ctx, m, vkxla.WithoutCache(), vkxla.WithBorrowedInputs(0))
	require.NoError(t, err)
	require.Zero(t, rt.MemoryStats().AddressTableBytes, "recorded at the first run, for x's memory")
	x, y := smallInts(hlo.MakeShape(hlo.S32, n), 1), smallInts(hlo.MakeShape(hlo.S32, n), 2)
	dx, err := rt.Upload(ctx, x)
	require.NoError(t, err)
	outs, err := exe.RunOnDevice(ctx, dx, y)
	require.NoError(t, err)
	require.Equal(t, int64(32), rt.MemoryStats().AddressTableBytes)
	require.NoError(t, outs[0].Close())
	require.NoError(t, exe.Close())
	require.NoError(t, dx.Close())
	require.Zero(t, rt.MemoryStats().AddressTableBytes)
}
