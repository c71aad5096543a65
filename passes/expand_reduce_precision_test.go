package passes

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// The expansion's integer ops compute, bit for bit, what cpuref's definition does,
// for every float type and formats that round, overflow, flush and keep NaN.
func TestExpandReducePrecisionMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, dt := range []hlo.DType{hlo.F16, hlo.BF16, hlo.F32, hlo.F64} {
		x := hlo.NewLiteral(hlo.MakeShape(dt, 64))
		for i := range 60 {
			x.SetFloat64(i, math.Ldexp(rng.Float64()*2-1, rng.IntN(60)-30))
		}
		for i, v := range []float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1), 65519} {
			x.SetFloat64(60+i, v)
		}
		for _, f := range [][2]int{{5, 10}, {8, 7}, {2, 0}, {1, 3}, {11, 52}, {4, 3}} {
			expandedMatchesCPU(t, `HloModule rp
ENTRY e {
  x = `+dt.String()+`[64] parameter(0)
  ROOT r = `+dt.String()+`[64] reduce-precision(x), exponent_bits=`+strconv.Itoa(f[0])+`, mantissa_bits=`+strconv.Itoa(f[1])+`
}`, 0, x)
		}
	}
}
