package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Multi-output fusion (XLA's): an elementwise value that the computation returns
// (an element of the root tuple) and that a kernel of the same dims also reads
// joins that kernel as an extra output, instead of being computed by a kernel of
// its own and read back. An optimizer update (Adam: m' = β1·m + (1−β1)·g,
// v' = β2·v + (1−β2)·g², p' = p − lr·m'/(√v' + ε), all three returned) becomes one
// kernel writing p', m' and v'. The kernel's computation returns a tuple (its root
// value first, then the extra outputs); its fusion instruction is tuple-shaped,
// the consumer's old instruction becomes get-tuple-element 0 of it (keeping its
// users), and the root tuple reads each extra output through a get-tuple-element.
// The code generator writes every output of such a kernel at the same index
// (lowerElemental), so the outputs share the kernel's dims. Rules:
//   - the value is elementwise with the dims of the kernel's root, which is
//     elementwise too (not a reduction, row kernel or GEMM: those have one output);
//   - its only other users are the computation's root tuple, which comes after the
//     kernel, so the get-tuple-elements can be placed right after it;
//   - a kernel has at most maxFusionOutputs outputs.

// maxFusionOutputs bounds a multi-output kernel's outputs (each is a binding).
const maxFusionOutputs = 8

// multiOutput is an extra output of a kernel: the outer value and its copy inside.
type multiOutput struct{ outer, clone *hlo.Instruction }

// canFuseAsOutput says whether p, which a non-consumer also reads, may join the
// kernel of consumer (k, if it has one yet) as an extra output by the rules above.
func (f *fuser) canFuseAsOutput(p, consumer *hlo.Instruction, k *fusedKernel) bool {
	if !f.live[consumer] {
		return false // dead code (DCE's, when it is off): it would compute p for nothing
	}
	root := consumer
	if k != nil {
		root = k.fc.Root
		if len(k.outputs)+2 > maxFusionOutputs || k.holds(hlo.OpDot, hlo.OpConvolution, hlo.OpReduce) {
			return false
		}
	}
	if !isElementwiseOp(p) || !isElementwiseOp(root) || !root.Shape.IsArray() || !p.Shape.IsArray() || !p.Shape.SameDims(root.Shape) {
		return false
	}
	tuple := f.c.Root
	if tuple.Op != hlo.OpTuple || !slices.Contains(tuple.Operands, p) {
		return false
	}
	// Users: the consumer's kernel, and the root tuple (once, however many of its
	// elements p is).
	return f.users[p.ID].all == 2 && f.users[p.ID].nonConsumers == 1
}

// isElementwiseOp reports unary, binary and other elementwise ops.
func isElementwiseOp(in *hlo.Instruction) bool {
	switch in.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return true
	}
	return false
}

// addOutput records p's copy as an extra output of k; the root tuple will read it
// through a get-tuple-element (splitOutputs).
func (k *fusedKernel) addOutput(p, clone *hlo.Instruction) {
	k.outputs = append(k.outputs, multiOutput{outer: p, clone: clone})
}

// splitOutputs turns a kernel with extra outputs into a tuple-shaped fusion
// instruction, made in place of k's fusion: the old instruction becomes its
// get-tuple-element 0 (so its users are unchanged), and each extra output gets a
// get-tuple-element that replaces the outer value in the root tuple. It returns
// the instructions to place before the old one (the fusion) and after it.
func (f *fuser) splitOutputs(k *fusedKernel) (before, after []*hlo.Instruction) {
	old, fc := k.fusion, k.fc
	elems := []*hlo.Instruction{fc.Root}
	shapes := []hlo.Shape{fc.Root.Shape.Clone()}
	for _, o := range k.outputs {
		elems = append(elems, o.clone)
		shapes = append(shapes, o.clone.Shape.Clone())
	}
	fused := &hlo.Instruction{Name: old.Name, Op: hlo.OpFusion, Shape: hlo.MakeTuple(shapes...),
		Operands: old.Operands, Attrs: old.Attrs, Called: old.Called}
	fc.Root = &hlo.Instruction{Name: f.names.fresh("tuple"), Op: hlo.OpTuple, Shape: fused.Shape.Clone(), Operands: elems}
	fc.Instructions = append(fc.Instructions, fc.Root)
	fc.Renumber()
	*old = hlo.Instruction{Name: f.names.fresh(old.Name), Op: hlo.OpGetTupleElement, Shape: shapes[0],
		Operands: []*hlo.Instruction{fused}, ID: old.ID}
	old.Attrs.TupleIndex = 0
	root := f.c.Root
	for i, o := range k.outputs {
		gte := &hlo.Instruction{Name: f.names.fresh(o.outer.Name), Op: hlo.OpGetTupleElement, Shape: shapes[i+1],
			Operands: []*hlo.Instruction{fused}}
		gte.Attrs.TupleIndex = int64(i + 1)
		for j, x := range root.Operands {
			if x == o.outer {
				root.Operands[j] = gte
			}
		}
		after = append(after, gte)
	}
	return []*hlo.Instruction{fused}, after
}
