package hlo

// Complement returns the dimensions 0..rank-1 that none of the lists name, in
// increasing order: a dot operand's free dimensions (neither batch nor
// contracting), a reduce's kept ones. Out-of-range entries are ignored.
func Complement(rank int, dims ...[]int64) []int64 {
	drop := make([]bool, rank)
	for _, list := range dims {
		for _, d := range list {
			if d >= 0 && int(d) < rank {
				drop[d] = true
			}
		}
	}
	var out []int64
	for d := range rank {
		if !drop[d] {
			out = append(out, int64(d))
		}
	}
	return out
}
