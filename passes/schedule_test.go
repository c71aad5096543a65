package passes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestSchedule(t *testing.T) {
	runPassCases(t, []passCase{
		{
			// Both products first keeps two 16 KiB buffers live; reducing each
			// product as soon as it exists keeps one (TestSchedulePeak).
			name:     "finish one chain before starting the next",
			disabled: []string{"fusion"},
			before:   readProgram("two_chains"),
			after: `HloModule two_chains
` + scalarAdd + `
ENTRY %two_chains (x: f32[64,8], w1: f32[8,64], w2: f32[8,64]) -> (f32[64], f32[64]) {
  %x = f32[64,8] parameter(0)
  %w1 = f32[8,64] parameter(1)
  %w2 = f32[8,64] parameter(2)
  %zero = f32[] constant(0)
  %p1 = f32[64,64] dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r1 = f32[64] reduce(%p1, %zero), dimensions={1}, to_apply=%add
  %p2 = f32[64,64] dot(%x, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r2 = f32[64] reduce(%p2, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[64], f32[64]) tuple(%r1, %r2)
}
`,
		},
		{
			name:     "an order that is already best stays",
			disabled: []string{"fusion"},
			before: `HloModule chain
ENTRY %chain (x: f32[64], y: f32[64]) -> f32[64] {
  %x = f32[64] parameter(0)
  %y = f32[64] parameter(1)
  %a = f32[64] exponential(%y)
  %b = f32[64] negate(%x)
  ROOT %c = f32[64] add(%a, %b)
}
`,
		},
	})
}

// TestSchedulePeak checks the memory model (heapsim, coarse kernels) on the
// two-chain module by hand: three 2 KiB parameters, 16 KiB products, 256-byte rows,
// a 4-byte zero that is resident from the start (constants are uploaded once) and
// takes 16 bytes (alignment). In the original order p2 is made while p1 waits for
// its reduction: x, w2 and both products (w1 died at p1) = 2+2+16+16 KiB, and the
// zero. Scheduled, p1 while all three parameters are live: 6 KiB + 16 B +
// 16 KiB, and p1 is reduced before p2 exists.
func TestSchedulePeak(t *testing.T) {
	m, err := hlo.ParseModule(readProgram("two_chains"))
	if err != nil {
		t.Fatal(err)
	}
	const kib = 1024
	if got, want := testModelPeak(t, m, Config{}), int64(36*kib+16); got != want {
		t.Errorf("original order peak %d, want %d", got, want)
	}
	m.Entry.Instructions = newMemoryModel(m.Entry).listSchedule()
	if got, want := testModelPeak(t, m, Config{}), int64(22*kib+16); got != want {
		t.Errorf("scheduled peak %d, want %d", got, want)
	}
}

// readProgram returns testdata/programs/<name>.hlo of the repository, the modules
// the root package's tests also run on the device.
func readProgram(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "programs", name+".hlo"))
	if err != nil {
		panic(err)
	}
	return string(b)
}
