package peer

import (
	"errors"
	"testing"

	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/hlo"
)

// TestModelProgramsOnGoMLX: the model suite's programs, translated op for op,
// run on GoMLX's simplego backend within the tolerance table of cpuref (small
// variants; the decode step through the dynamic-update-slice rewrite).
func TestModelProgramsOnGoMLX(t *testing.T) {
	backend, err := NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Finalize()
	for _, p := range bench.ModelPrograms() {
		t.Run(p.Name, func(t *testing.T) {
			m, in, err := p.Build(true)
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRunner(p.Name, backend, m, in)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := bench.CheckAgainstCPU(m, in, r.Outputs); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDynamicUpdateSliceRewrite: a write of one row at a clamped start, against
// the values worked out by hand.
func TestDynamicUpdateSliceRewrite(t *testing.T) {
	b := hlo.NewBuilder("dus")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 3, 2), "x")
	row := b.Parameter(hlo.MakeShape(hlo.F32, 1, 2), "row")
	at := b.Parameter(hlo.Scalar(hlo.S32), "at")
	m, err := b.Build(b.DynamicUpdateSlice(x, row, []*hlo.Instruction{at, b.ScalarConstant(hlo.S32, 0)}))
	if err != nil {
		t.Fatal(err)
	}
	backend, err := NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Finalize()
	xs := hlo.MustFromSlice([]int64{3, 2}, []float32{1, 2, 3, 4, 5, 6})
	rows := hlo.MustFromSlice([]int64{1, 2}, []float32{-1, -2})
	for _, c := range []struct {
		at   int32
		want []float32
	}{
		{1, []float32{1, 2, -1, -2, 5, 6}},
		{7, []float32{1, 2, 3, 4, -1, -2}},  // clamped to the last row
		{-3, []float32{-1, -2, 3, 4, 5, 6}}, // clamped to the first
	} {
		r, err := NewRunner("dus", backend, m, []*hlo.Literal{xs, rows, hlo.ScalarLiteral(c.at)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := hlo.Values[float32](r.Outputs[0])
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("at %d: got %v, want %v", c.at, got, c.want)
			}
		}
		r.Close()
	}
}

// TestTranslateRefuses: an op the peer lacks is an ErrUnsupported error that
// names the instruction.
func TestTranslateRefuses(t *testing.T) {
	b := hlo.NewBuilder("pad")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 4), "x")
	m, err := b.Build(b.Pad(x, b.ScalarConstant(hlo.F32, 0), []hlo.PadDim{{Low: 1, High: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	backend, err := NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Finalize()
	_, err = Translate(backend, m)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v, want ErrUnsupported", err)
	}
	t.Log(err)
}
