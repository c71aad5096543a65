package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Row fusion: a reduction over the minor dims of its input (a row reduction, as in
// softmax and layernorm over the last dim) joins the elementwise kernel that reads
// its result back along those rows, so that softmax and layernorm become one
// kernel each. The code generator lowers such a kernel row by row
// (spirv/codegen/rows.go): each invocation folds a row's reductions once, then
// computes the row's outputs, so the reduction is neither recomputed per element
// nor written to memory and read back. The rules keep that lowering possible and
// cheap:
//   - the reduction has one user (it is computed in one kernel, never copied);
//   - the kernel's root is an array, not itself a reduction, whose leading dims are
//     the reduction's result dims R (the rows), every reduction in the kernel has
//     the same R, and the kernel holds no dot (fusion_epilogue.go);
//   - inside the kernel the reduction's value is read only along rows: by broadcasts
//     that map R to the leading dims, or by elementwise ops of shape R whose own
//     readers follow the same rule (mean = sum/n; rsqrt(var + eps)), so that each
//     row's value is computed once and reused for the whole row;
//   - a row is short enough to sweep in one invocation: every row sweep (one per
//     reduction and one for the outputs) together covers at most maxRowWork elements.

// maxRowWork bounds the elements one invocation of a row kernel sweeps per row,
// over all its reductions and its outputs: 2^15 leaves a row of the largest fused
// reduction (the vec4 sweep counts a loop iteration per four) well inside lavapipe's
// 65535 loop iterations per invocation, with room for the op's own loops.
const maxRowWork = 1 << 15

// canFuseRow says whether the row reduction p may join the kernel of consumer (k,
// if it has one yet) by the rules above.
func (f *fuser) canFuseRow(p, consumer *hlo.Instruction, k *fusedKernel) bool {
	rows, ok := hlo.RowReduceDims(p)
	if !ok || f.users[p.ID].all != 1 {
		return false
	}
	root := consumer
	if k != nil {
		root = k.fc.Root
	}
	out := root.Shape
	if !out.IsArray() || root.Op == hlo.OpReduce || out.Rank() < len(rows) || !slices.Equal(out.Dims[:len(rows)], rows) {
		return false
	}
	work := rowLength(out, rows) + rowLength(p.Operands[0].Shape, rows)
	var body []*hlo.Instruction
	if k != nil {
		if k.holds(hlo.OpDot, hlo.OpConvolution) {
			return false
		}
		body = k.body
	}
	for _, in := range body {
		if in.Op != hlo.OpReduce {
			continue
		}
		dims, _ := hlo.RowReduceDims(in)
		if !slices.Equal(dims, rows) {
			return false
		}
		work += rowLength(in.Operands[0].Shape, rows)
	}
	if work > maxRowWork {
		return false
	}
	if k == nil { // the consumer, the kernel's root-to-be, is p's only reader
		return rowPreserving(consumer, len(rows))
	}
	return readsAlongRows(k.fc.Params[slices.Index(k.fusion.Operands, p)], kernelReaders(k), len(rows))
}

// rowLength is the elements per row of an array whose leading dims are rows.
func rowLength(s hlo.Shape, rows []int64) int64 {
	n := int64(1)
	for _, d := range s.Dims[len(rows):] {
		n *= d
	}
	return n
}

// kernelReaders maps each value of k's computation to the body instructions that
// read it.
func kernelReaders(k *fusedKernel) map[*hlo.Instruction][]*hlo.Instruction {
	readers := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range k.body {
		for _, x := range distinct(in.Operands) {
			readers[x] = append(readers[x], in)
		}
	}
	return readers
}

// readsAlongRows says whether the kernel reads the row-shaped value v (rank r) only
// along rows: each reader is a broadcast mapping v's dims to the leading ones, or an
// elementwise op of v's shape read the same way (or the kernel's root, which has
// no readers).
func readsAlongRows(v *hlo.Instruction, readers map[*hlo.Instruction][]*hlo.Instruction, r int) bool {
	for _, u := range readers[v] {
		if !rowPreserving(u, r) {
			return false
		}
		if u.Op != hlo.OpBroadcast && !readsAlongRows(u, readers, r) {
			return false
		}
	}
	return true
}

// rowPreserving: u reads its row-shaped operand at the row's own index.
func rowPreserving(u *hlo.Instruction, r int) bool {
	if u.Op == hlo.OpBroadcast {
		dims := u.Attrs.Dimensions
		for i, d := range dims {
			if d != int64(i) {
				return false
			}
		}
		return len(dims) == r
	}
	switch u.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return u.Shape.IsArray() && u.Shape.Rank() == r
	}
	return false
}
