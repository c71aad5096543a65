package hlo

import "slices"

// RowReduceDims returns the result dims of a reduction of one array over the
// minor dims of its input (a row reduction: softmax's max and sum, layernorm's
// mean), which are the input's leading dims, and whether in is one (reducing
// every dim is not: it has no rows). Fusion fuses such reductions into the
// kernels that read them along rows, and code generation lowers those kernels
// row by row.
func RowReduceDims(in *Instruction) ([]int64, bool) {
	if in.Op != OpReduce || len(in.Operands) != 2 || !in.Shape.IsArray() {
		return nil, false
	}
	x := in.Operands[0].Shape
	dims := slices.Clone(in.Attrs.Dimensions)
	slices.Sort(dims)
	keep := x.Rank() - len(dims)
	for i, d := range dims {
		if d != int64(keep+i) {
			return nil, false
		}
	}
	return x.Dims[:keep], keep > 0
}
