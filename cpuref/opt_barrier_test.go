package cpuref

import "testing"

// opt-barrier is the identity on its operand tuple, whole or by element.
func TestOptBarrierIsTheIdentity(t *testing.T) {
	out := evalText(t, `HloModule jit_checkpoint
ENTRY main {
  x = f32[3] parameter(0)
  i = s32[] parameter(1)
  t = (f32[3], s32[]) tuple(x, i)
  b = (f32[3], s32[]) opt-barrier(t)
  bx = f32[3] get-tuple-element(b), index=0
  bi = s32[] get-tuple-element(b), index=1
  ROOT r = (f32[3], s32[], (f32[3], s32[])) tuple(bx, bi, b)
}`, vec(float32(1), -2.5, 0), scalar(int32(7)))
	assertLit(t, vec(float32(1), -2.5, 0), out.Elems()[0])
	assertLit(t, scalar(int32(7)), out.Elems()[1])
	assertLit(t, vec(float32(1), -2.5, 0), out.Elems()[2].Elems()[0])
	assertLit(t, scalar(int32(7)), out.Elems()[2].Elems()[1])
}
