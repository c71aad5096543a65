package passes

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestUpcastOperands(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "converts of both operands to the result type",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (x: s8[2,3], y: s8[3,4]) -> s32[2,4] {
  %x = s8[2,3] parameter(0)
  %y = s8[3,4] parameter(1)
  ROOT %d = s32[2,4] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`,
		after: `HloModule m
ENTRY %e (x: s8[2,3], y: s8[3,4]) -> s32[2,4] {
  %x = s8[2,3] parameter(0)
  %y = s8[3,4] parameter(1)
  %d.convert = s32[2,3] convert(%x)
  %d.convert.1 = s32[3,4] convert(%y)
  ROOT %d = s32[2,4] dot(%d.convert, %d.convert.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`,
	}})
}

// The upcast contraction computes exactly what cpuref's definition does (products
// formed in the result type): bit for bit for integers and for float products that
// the wider type holds exactly, summed in one order.
func TestUpcastOperandsMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for _, c := range [][2]hlo.DType{{hlo.S8, hlo.S32}, {hlo.U8, hlo.U32}, {hlo.U8, hlo.S32}, {hlo.BF16, hlo.F32},
		{hlo.F16, hlo.F32}, {hlo.F32, hlo.F64}} {
		in, out := c[0].String(), c[1].String()
		x, y, k := hlo.NewLiteral(hlo.MakeShape(c[0], 3, 16)), hlo.NewLiteral(hlo.MakeShape(c[0], 16, 5)), hlo.NewLiteral(hlo.MakeShape(c[0], 2, 3, 4))
		xc := hlo.NewLiteral(hlo.MakeShape(c[0], 2, 9, 3))
		for _, l := range []*hlo.Literal{x, y, k, xc} {
			for i := range l.NumElements() {
				if c[0].IsFloat() {
					l.SetFloat64(i, rng.Float64()*4-2)
				} else {
					l.SetBits(i, rng.Uint64())
				}
			}
		}
		expandedMatchesCPU(t, `HloModule m
ENTRY e {
  x = `+in+`[3,16] parameter(0)
  y = `+in+`[16,5] parameter(1)
  ROOT d = `+out+`[3,5] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, 0, x, y)
		expandedMatchesCPU(t, `HloModule m
ENTRY e {
  x = `+in+`[2,9,3] parameter(0)
  k = `+in+`[2,3,4] parameter(1)
  ROOT c = `+out+`[2,8,4] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
}`, 0, xc, k)
	}
}
