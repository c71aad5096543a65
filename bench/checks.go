package bench

import (
	"fmt"
	"math"
)

// samples lists up to count indices spread over [0, n), the first and last among
// them.
func samples(n, count int) []int {
	if n <= count {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, count)
	for i := range out {
		out[i] = int(int64(i) * int64(n-1) / int64(count-1))
	}
	return out
}

// closeTo reports whether got is within f32 rounding of want, for a result
// accumulated from terms whose magnitudes sum to scale.
func closeTo(got float32, want, scale float64) bool {
	return math.Abs(float64(got)-want) <= 1e-5*scale+1e-6
}

// checkSaxpy compares sampled elements of out with a·x + y.
func checkSaxpy(x, y, out []byte) error {
	n := len(x) / 4
	if len(out) < 4*n {
		return fmt.Errorf("saxpy: %d output bytes, want %d", len(out), 4*n)
	}
	for _, i := range samples(n, 257) {
		xi, yi := float64(f32At(x, i)), float64(f32At(y, i))
		want := SaxpyA*xi + yi
		if got := f32At(out, i); !closeTo(got, want, math.Abs(SaxpyA*xi)+math.Abs(yi)) {
			return fmt.Errorf("saxpy: element %d = %v, want %v", i, got, want)
		}
	}
	return nil
}

// checkGemm compares sampled elements of the row-major m×n product c with a·b
// (a m×k, b k×n), summed in float64.
func checkGemm(a, b, c []byte, m, n, k int) error {
	if len(c) < 4*m*n {
		return fmt.Errorf("gemm: %d output bytes, want %d", len(c), 4*m*n)
	}
	for _, e := range samples(m*n, 61) {
		i, j := e/n, e%n
		var want, scale float64
		for p := range k {
			t := float64(f32At(a, i*k+p)) * float64(f32At(b, p*n+j))
			want += t
			scale += math.Abs(t)
		}
		if got := f32At(c, e); !closeTo(got, want, 10*scale) {
			return fmt.Errorf("gemm: C[%d,%d] = %v, want %v", i, j, got, want)
		}
	}
	return nil
}

// checkNegate compares every element of out with -x.
func checkNegate(x, out []byte) error {
	for i := range len(x) / 4 {
		if got, want := f32At(out, i), -f32At(x, i); got != want {
			return fmt.Errorf("negate: element %d = %v, want %v", i, got, want)
		}
	}
	return nil
}
