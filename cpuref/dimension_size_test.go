package cpuref

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestGetDimensionSize(t *testing.T) {
	out := evalText(t, `HloModule dims
ENTRY e {
  x = f32[2,5,0] parameter(0)
  a = s32[] get-dimension-size(x), dimensions={0}
  b = s32[] get-dimension-size(x), dimensions={1}
  c = s32[] get-dimension-size(x), dimensions={2}
  ROOT t = (s32[], s32[], s32[]) tuple(a, b, c)
}`, hlo.NewLiteral(hlo.MakeShape(hlo.F32, 2, 5, 0)))
	for i, want := range []int32{2, 5, 0} {
		assertLit(t, scalar(want), out.Elems()[i], "dimension %d", i)
	}
}
