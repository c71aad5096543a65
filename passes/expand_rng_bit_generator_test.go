package passes

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// The expansion draws exactly cpuref's bits (which its known-answer tests pin)
// for every algorithm, state shape, output type and a spread of output shapes:
// odd and even dimensions (Threefry's split rule), scalars, counts that leave a
// Philox block partly used, and a counter that carries into its high word.
func TestExpandRngBitGeneratorMatchesDefinition(t *testing.T) {
	all := ^uint64(0)
	for _, alg := range []string{"rng_default", "rng_philox", "rng_three_fry"} {
		states := [][]uint64{{0x0123456789abcdef, all - 2}, {5, all - 1, 7}}
		for _, state := range states {
			if alg == "rng_three_fry" && len(state) == 3 {
				continue
			}
			for _, dt := range []string{"u32", "s32", "u64", "s64"} {
				for _, dims := range []string{"[]", "[7]", "[2,3]", "[5,3,2]"} {
					st := hlo.MustFromSlice([]int64{int64(len(state))}, state)
					sh := st.Shape().String()
					t.Run(fmt.Sprintf("%s/%s/%s%s", alg, sh, dt, dims), func(t *testing.T) {
						expandedMatchesCPU(t, `HloModule rng
ENTRY e {
  s = `+sh+` parameter(0)
  ROOT r = (`+sh+`, `+dt+dims+`) rng-bit-generator(s), algorithm=`+alg+`
}`, 0, st)
					})
				}
			}
		}
	}
}

// The expansion's text is hundreds of lines; its make-up is checked instead: only
// integer ops code generation has, Philox's twenty u32×u32 products (two a round,
// ten rounds) as u64 multiplies, Threefry's twenty rotations as
// or(shift-left, shift-right-logical), and nothing of rng-bit-generator left.
func TestExpandRngBitGeneratorOps(t *testing.T) {
	allowed := map[hlo.Opcode]bool{hlo.OpParameter: true, hlo.OpConstant: true, hlo.OpIota: true,
		hlo.OpSlice: true, hlo.OpReshape: true, hlo.OpBroadcast: true, hlo.OpConcatenate: true,
		hlo.OpConvert: true, hlo.OpBitcastConvert: true, hlo.OpAnd: true, hlo.OpOr: true, hlo.OpXor: true,
		hlo.OpShiftLeft: true, hlo.OpShiftRightLogical: true, hlo.OpAdd: true, hlo.OpMultiply: true,
		hlo.OpCompare: true, hlo.OpSelect: true, hlo.OpTuple: true}
	for _, tc := range []struct {
		alg, state, bits      string
		multiplies, rotations int
	}{
		{"rng_philox", "u64[3]", "u32[4]", 20, 0},
		{"rng_default", "u64[2]", "s64[3]", 20, 0},
		{"rng_three_fry", "u64[2]", "u64[]", 0, 20},
	} {
		m, err := hlo.ParseModule(`HloModule rng
ENTRY e {
  s = ` + tc.state + ` parameter(0)
  ROOT r = (` + tc.state + `, ` + tc.bits + `) rng-bit-generator(s), algorithm=` + tc.alg + `
}`)
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(m, Config{Disabled: OptionalNames()}); err != nil {
			t.Fatal(err)
		}
		multiplies, rotations := 0, 0
		for _, in := range m.Entry.Instructions {
			if !allowed[in.Op] {
				t.Errorf("%s: %s is %v", tc.alg, in.Name, in.Op)
			}
			if in.Op == hlo.OpMultiply && in.Shape.DType == hlo.U64 {
				multiplies++
			}
			if in.Op == hlo.OpOr && in.Operands[0].Op == hlo.OpShiftLeft && in.Operands[1].Op == hlo.OpShiftRightLogical {
				rotations++
			}
		}
		if multiplies != tc.multiplies || rotations != tc.rotations {
			t.Errorf("%s %s→%s: %d u64 multiplies and %d rotations, want %d and %d",
				tc.alg, tc.state, tc.bits, multiplies, rotations, tc.multiplies, tc.rotations)
		}
	}
}
