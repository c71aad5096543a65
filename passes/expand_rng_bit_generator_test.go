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
