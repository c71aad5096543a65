package nn

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// TestPools: max pooling of 0…15 laid out as a 4×4 image takes each window's
// bottom-right element; Same padding with a 3×3 window and stride 2 pads one row
// and column at the end (never chosen: the pad is −∞); the global average is each
// channel's mean.
func TestPools(t *testing.T) {
	x := newTensor(1, 4, 4, 1)
	for i := range x.v {
		x.v[i] = float64(i)
	}
	c := newTensor(1, 2, 2, 2)
	copy(c.v, []float64{1, 10, 2, 20, 3, 30, 4, 40})
	b := hlo.NewBuilder("pools")
	px, pc := x.param(b, "x"), c.param(b, "c")
	got := evaluate(t, b, b.Tuple(MaxPool2D(b, px, 2, 2, Valid), MaxPool2D(b, px, 3, 2, Same), GlobalAvgPool(b, pc)), x, c)
	assertClose(t, "valid 2×2/2", got[0], tensor{v: []float64{5, 7, 13, 15}}, 0)
	assertClose(t, "same 3×3/2", got[1], tensor{v: []float64{10, 11, 14, 15}}, 0)
	assertClose(t, "global average", got[2], tensor{v: []float64{2.5, 25}}, 0)
	if d := got[1].dims; len(d) != 4 || d[1] != 2 || d[2] != 2 {
		t.Fatalf("same pooling's shape %v, want [1 2 2 1]", d)
	}
}
