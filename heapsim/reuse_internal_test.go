package heapsim

import (
	"testing"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/hlo"
)

// planOf lowers a synthetic main block: each step is a dispatch over the given
// ranges, so lifetimes follow from the step indices alone.
func planOf(t *testing.T, limits alloc.Limits, sizes []int64, kinds []rangeKind, steps [][]int, root []int) *lowering {
	t.Helper()
	l := &lowering{limits: limits}
	for i, size := range sizes {
		l.newRange("", size, kinds[i])
	}
	main := &Block{}
	for _, args := range steps {
		main.Steps = append(main.Steps, Step{Kind: StepDispatch, Args: args})
	}
	l.place(l.buildTimeline(main, Value{Shape: hlo.Scalar(hlo.F32), Leaves: root}))
	return l
}

func TestPlaceByLifetime(t *testing.T) {
	lim := alloc.Limits{Alignment: 16, MaxBindingRange: 1 << 20, MaxBlockSize: 1 << 20}
	// 0 param (40 B) → 1 temp (100 B) → 2 temp (100 B) → 3 output (40 B)
	l := planOf(t, lim, []int64{40, 100, 100, 40}, []rangeKind{rangeParam, rangeTemp, rangeTemp, rangeOutput},
		[][]int{{0, 1}, {1, 2}, {2, 3}}, []int{3})
	// Largest first: 1 at 0; 2 is live with 1 (step 1): at 112; 0 is live with 1
	// only: after it at 112 (2 starts later); 3 is live with 2 only: at 0.
	want := []int64{112, 0, 112, 0}
	for r, off := range want {
		if got := l.plan.Ranges[r].Offset; got != off {
			t.Errorf("range %d at %d, want %d (plan %v)", r, got, off, l.plan.Ranges)
		}
	}
	if l.liveBound != 112+112 {
		t.Errorf("lower bound %d, want 224 (two 100-byte temporaries, aligned, at step 1)", l.liveBound)
	}
}

func TestPlaceKeepsConstantsAndCrossesBlocks(t *testing.T) {
	// Blocks of 256 B: three 200-byte buffers live at once need three blocks; a
	// constant is never reused even after its last read.
	lim := alloc.Limits{Alignment: 16, MaxBindingRange: 256, MaxBlockSize: 256}
	l := planOf(t, lim, []int64{200, 200, 200, 48, 48}, []rangeKind{rangeParam, rangeParam, rangeOutput, rangeConstant, rangeTemp},
		[][]int{{0, 1, 2, 3}, {2, 4}}, []int{2})
	blocks := map[int]bool{}
	for r := range 3 {
		pr := l.plan.Ranges[r]
		if pr.Offset+pr.Size > 256 {
			t.Errorf("range %d crosses its block: %v", r, pr)
		}
		blocks[pr.Block] = true
	}
	if len(blocks) != 3 {
		t.Errorf("the three live 200-byte buffers use blocks %v, want three distinct", blocks)
	}
	c, tmp := l.plan.Ranges[3], l.plan.Ranges[4]
	if c.Block == tmp.Block && c.Offset < tmp.Offset+tmp.Size && tmp.Offset < c.Offset+c.Size {
		t.Errorf("temporary %v reuses the constant's bytes %v", tmp, c)
	}
}

// TestInPlaceOneOutputPerInput: a two-output kernel whose first output nobody reads
// may write one output over its dying input, never both (they would be stored to
// the same bytes by one invocation).
func TestInPlaceOneOutputPerInput(t *testing.T) {
	l := &lowering{limits: alloc.Limits{Alignment: 16, MaxBindingRange: 1 << 20, MaxBlockSize: 1 << 20}}
	in := l.newRange("x", 64, rangeParam)
	out1 := l.newRange("a", 64, rangeTemp)
	out2 := l.newRange("b", 64, rangeTemp)
	res := l.newRange("r", 64, rangeOutput)
	main := &Block{Steps: []Step{
		{Kind: StepDispatch, Args: []int{in, out1, out2}},
		{Kind: StepDispatch, Args: []int{out2, res}},
	}}
	l.inPlace = []inPlaceCandidate{{block: main, step: 0, pairs: [][2]int{{in, out1}, {in, out2}}}}
	tl := l.buildTimeline(main, Value{Shape: hlo.MakeShape(hlo.F32, 16), Leaves: []int{res}})
	l.shareInPlace(tl)
	if l.shares[out1] == in && l.shares[out2] == in {
		t.Fatalf("both outputs share x: %v", l.shares)
	}
	if l.shares[out1] != in {
		t.Errorf("the first output should take x (shares %v)", l.shares)
	}
}
