package cpuref

import (
	"testing"
	"time"

	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkC128LiteralPath times the c128 kernels that call their computations on
// scalar literals against the same module on c64 (the 64-bit word path), in one
// process: the metric x-c64 is the c128 time over the c64 time.
func BenchmarkC128LiteralPath(b *testing.B) {
	modules := map[string]func(dt string) string{
		"reduce-window": func(dt string) string {
			return `HloModule m
add {
  a = ` + dt + `[] parameter(0)
  b = ` + dt + `[] parameter(1)
  ROOT s = ` + dt + `[] add(a, b)
}
ENTRY e {
  x = ` + dt + `[1024] parameter(0)
  z = ` + dt + `[] constant((0, 0))
  ROOT r = ` + dt + `[1017] reduce-window(x, z), window={size=8}, to_apply=add
}`
		},
		"sort": func(dt string) string {
			part := map[string]string{"c64": "f32", "c128": "f64"}[dt]
			return `HloModule m
lt {
  a = ` + dt + `[] parameter(0)
  b = ` + dt + `[] parameter(1)
  ra = ` + part + `[] real(a)
  rb = ` + part + `[] real(b)
  ROOT l = pred[] compare(ra, rb), direction=LT
}
ENTRY e {
  x = ` + dt + `[1024] parameter(0)
  ROOT s = ` + dt + `[1024] sort(x), dimensions={0}, is_stable=true, to_apply=lt
}`
		},
	}
	x64, x128 := make([]complex64, 1024), make([]complex128, 1024)
	for i := range x64 {
		v := complex(float64((i*7919)%1024), float64(i))
		x64[i], x128[i] = complex64(v), v
	}
	for name, text := range modules {
		b.Run(name, func(b *testing.B) {
			m64, err := hlo.ParseModule(text("c64"))
			if err != nil {
				b.Fatal(err)
			}
			m128, err := hlo.ParseModule(text("c128"))
			if err != nil {
				b.Fatal(err)
			}
			in64, in128 := hlo.MustFromSlice([]int64{1024}, x64), hlo.MustFromSlice([]int64{1024}, x128)
			var t64, t128 time.Duration
			for range b.N {
				start := time.Now()
				if _, err := Eval(m64, in64); err != nil {
					b.Fatal(err)
				}
				t64 += time.Since(start)
				start = time.Now()
				if _, err := Eval(m128, in128); err != nil {
					b.Fatal(err)
				}
				t128 += time.Since(start)
			}
			b.ReportMetric(t128.Seconds()/t64.Seconds(), "x-c64")
		})
	}
}
