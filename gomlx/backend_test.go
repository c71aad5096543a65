package gomlx

import (
	"errors"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("device=1,budget=2MiB,validation=1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Device != "1" || c.Budget != 2<<20 || c.Validation == nil || !*c.Validation {
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
	if err == nil || !errors.Is(err, errNotImplemented()) {
		t.Fatalf("FFT: %v", err)
	}
}
