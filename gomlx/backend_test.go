package gomlx

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/vkxla/vkxla"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("device=1,budget=2MiB,validation=1,without=constant-folding+fusion")
	if err != nil {
		t.Fatal(err)
	}
	if c.Device != "1" || c.Budget != 2<<20 || c.Validation == nil || !*c.Validation ||
		!slices.Equal(c.Without, []string{"constant-folding", "fusion"}) {
		t.Fatalf("ParseConfig = %+v", c)
	}
	if c, err := ParseConfig(""); err != nil || c.Budget != 0 || c.Validation != nil {
		t.Fatalf("empty config = %+v, %v", c, err)
	}
	for _, bad := range []string{"budget=lots", "budget=-1", "validation=maybe", "colour=blue"} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("ParseConfig(%q) accepted", bad)
		}
	}
}

func TestRegistered(t *testing.T) {
	b, err := backends.NewWithConfig("vkxla:validation=1")
	if err != nil {
		t.Fatal(err)
	}
	defer closeBackend(t, b)
	if b.Name() != BackendName {
		t.Fatalf("backend %q", b.Name())
	}
}

func closeBackend(t *testing.T, b backends.Backend) {
	t.Helper()
	if err := b.(*Backend).Close(); err != nil {
		t.Error(err)
	}
}

// testBackend opens the backend with validation on; it closes at the test's end
// and fails the test on any validation message.
func testBackend(t *testing.T) *Backend {
	t.Helper()
	v := true
	b, err := NewWithConfig(Config{Validation: &v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBackend(t, b) })
	return b
}

func TestAddBroadcastScalar(t *testing.T) {
	b := testBackend(t)
	out, err := graph.ExecOnce(b, func(x, y *graph.Node) *graph.Node {
		return graph.Add(graph.Mul(x, y), graph.Const(x.Graph(), float32(1)))
	}, [][]float32{{1, 2, 3}, {4, 5, 6}}, [][]float32{{10, 20, 30}})
	if err != nil {
		t.Fatal(err)
	}
	got := out.Value().([][]float32)
	want := [][]float32{{11, 41, 91}, {41, 101, 181}}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
}

func TestNotImplementedNamesOp(t *testing.T) {
	b := testBackend(t)
	bl := b.Builder("c")
	x, err := bl.Parameter("x", shapesF32(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bl.FFT(x, backends.FFTForward, []int{2})
	if err == nil || !errors.Is(err, errNotImplemented()) || !strings.Contains(err.Error(), "FFT") {
		t.Fatalf("FFT: %v", err)
	}
}

// TestExecuteDonatesAndChains runs x·2+1 on device buffers: the output of one
// execution feeds the next without leaving the device; a donated input is dead
// afterwards and its memory is the executable's donated bytes.
func TestExecuteDonatesAndChains(t *testing.T) {
	b := testBackend(t)
	bl := b.Builder("affine")
	x, err := bl.Parameter("x", shapesF32(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := bl.Constant([]float32{2})
	one, _ := bl.Constant([]float32{1})
	m, err := bl.Mul(x, two)
	if err != nil {
		t.Fatal(err)
	}
	y, err := bl.Add(m, one)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := bl.Compile([]backends.Op{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Finalize()
	in, err := b.BufferFromFlatData(0, []float32{0, 1, -1, 0.5}, shapesF32(4))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exe.Execute([]backends.Buffer{in}, nil, 0) // not donated: in stays
	if err != nil {
		t.Fatal(err)
	}
	outs2, err := exe.Execute(outs, []bool{true}, 0) // donated
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if err := b.BufferToFlatData(outs2[0], got); err != nil {
		t.Fatal(err)
	}
	if want := []float32{3, 7, -1, 5}; !slices.Equal(got, want) { // (2x+1)·2+1
		t.Fatalf("got %v, want %v", got, want)
	}
	if err := b.BufferToFlatData(outs[0], got); !errors.Is(err, vkxla.ErrClosed) {
		t.Fatalf("reading a donated buffer: %v, want ErrClosed", err)
	}
	if err := b.BufferToFlatData(in, got); err != nil || got[1] != 1 {
		t.Fatalf("the kept input: %v %v", got, err)
	}
	stats, ok := b.MemoryStats()
	if !ok || stats.DonatedBytes != 16 || stats.BorrowedBytes != 0 {
		t.Fatalf("MemoryStats after the donating run: %v", stats)
	}
	if _, err := exe.Execute([]backends.Buffer{outs[0]}, nil, 0); !errors.Is(err, vkxla.ErrClosed) {
		t.Fatalf("executing on a donated buffer: %v, want ErrClosed", err)
	}
	if err := b.BufferFinalize(outs2[0]); err != nil {
		t.Fatal(err)
	}
}

// TestExecuteRejectsWrongShape: an input of another shape is an error naming it.
func TestExecuteRejectsWrongShape(t *testing.T) {
	b := testBackend(t)
	bl := b.Builder("neg")
	x, _ := bl.Parameter("x", shapesF32(2), nil)
	y, _ := bl.Neg(x)
	exe, err := bl.Compile([]backends.Op{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := b.BufferFromFlatData(0, []float32{1, 2, 3}, shapesF32(3))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exe.Execute([]backends.Buffer{in}, nil, 0); err == nil || !strings.Contains(err.Error(), "input 0 (x)") {
		t.Fatalf("Execute on a (3) buffer: %v", err)
	}
	if _, err := b.BufferFromFlatData(0, []float32{1, 2}, shapesF32(3)); err == nil {
		t.Fatal("BufferFromFlatData accepted 2 values for 3")
	}
}

// TestCompileCachePerShape: GoMLX's graph.Exec compiles a graph per input
// shape; each shape is one vkxla compile (GoMLX donates the inputs it makes from
// Go slices: one donation pattern), and a new Exec of the same graph is a cache
// hit.
func TestCompileCachePerShape(t *testing.T) {
	b := testBackend(t)
	fn := func(x *graph.Node) *graph.Node { return graph.Sqrt(graph.Abs(x)) }
	e1 := graph.MustNewExec(b, fn)
	before := b.Runtime().CacheStats()
	for _, x := range []any{[]float32{4, 9}, []float32{16, 25}, []float32{1, 4, 9}} {
		if _, err := e1.Exec(x); err != nil {
			t.Fatal(err)
		}
	}
	e2 := graph.MustNewExec(b, fn) // a new Exec builds the same module again
	out, err := e2.Exec([]float32{4, 9})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Value().([]float32); !slices.Equal(got, []float32{2, 3}) {
		t.Fatalf("got %v", got)
	}
	after := b.Runtime().CacheStats()
	if misses, hits := after.Misses-before.Misses, after.Hits-before.Hits; misses != 2 || hits != 1 {
		t.Fatalf("%d compiles and %d cache hits for 2 shapes and one rebuilt module; want 2 and 1", misses, hits)
	}
}

// TestSharedRuntimeOutlivesABackend: two backends of one configuration share a
// runtime; finalizing one leaves the other working, and its buffers and
// executables can still be finalized (their memory returns to the pool).
func TestSharedRuntimeOutlivesABackend(t *testing.T) {
	v := true
	a, err := NewWithConfig(Config{Validation: &v})
	if err != nil {
		t.Fatal(err)
	}
	b := testBackend(t)
	if a.Runtime() != b.Runtime() {
		t.Fatal("backends of one configuration have different runtimes")
	}
	buf, err := a.BufferFromFlatData(0, []float32{1, 2, 3, 4}, shapesF32(4))
	if err != nil {
		t.Fatal(err)
	}
	inUse := b.RuntimeMemoryStats().Tensors.BytesInUse
	a.Finalize()
	if err := a.BufferFinalize(buf); err != nil {
		t.Fatal(err)
	}
	if after := b.RuntimeMemoryStats().Tensors.BytesInUse; after >= inUse {
		t.Fatalf("tensor bytes in use %d after finalizing a buffer of the finalized backend, %d before", after, inUse)
	}
	out, err := graph.ExecOnce(b, func(x *graph.Node) *graph.Node { return graph.Neg(x) }, []float32{1, -2})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Value().([]float32); !slices.Equal(got, []float32{-1, 2}) {
		t.Fatalf("got %v", got)
	}
}
