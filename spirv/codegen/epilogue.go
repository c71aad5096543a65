package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// GEMM epilogues (XLA's kOutput fusion). The fusion pass fuses a dot into the
// elementwise kernel that reads it at each element's own index: bias adds,
// scales, activations (relu, clamp, gelu, tanh, logistic), residual adds and
// converts. Such a kernel lowers as the dot's GEMM whose output stage, instead of
// storing an element of the product, hands it to the epilogue: the product's value
// is defined in the emitter's cache at the element's index and the kernel's root is
// emitted there, reading its other inputs (a bias row, a residual) through the
// emitter, so the product never goes to memory. The hook (gemmEpilogue) takes only
// an element index and the product's value, so a convolution lowered as an
// implicit GEMM can use it as well.

// gemmDot returns the dot a GEMM kernel computes: the root, or the one dot of a
// computation whose root is an epilogue of it (every instruction between them
// elementwise with the dot's dims, so each element of the product is read at its
// own index only); nil otherwise.
func gemmDot(c *hlo.Computation) *hlo.Instruction { return epilogueRoot(c, hlo.OpDot) }

// gemmConv is gemmDot for a convolution lowered as an implicit GEMM.
func gemmConv(c *hlo.Computation) *hlo.Instruction { return epilogueRoot(c, hlo.OpConvolution) }

// epilogueRoot returns the root if it is an op, else the one op of c that the root
// is an epilogue of, or nil.
func epilogueRoot(c *hlo.Computation, op hlo.Opcode) *hlo.Instruction {
	root := c.Root
	if root.Op == op || !root.Shape.IsArray() {
		return root
	}
	var dot *hlo.Instruction
	for _, in := range c.Instructions {
		if in.Op == op {
			if dot != nil {
				return nil
			}
			dot = in
		}
	}
	if dot == nil || !root.Shape.SameDims(dot.Shape) || !readAtOwnIndex(c, dot) {
		return nil
	}
	return dot
}

// readAtOwnIndex says whether every instruction of c that depends on v is
// elementwise with v's dims, and the root depends on it: the root's element at an
// index then reads v at that index only.
func readAtOwnIndex(c *hlo.Computation, v *hlo.Instruction) bool {
	dep := map[*hlo.Instruction]bool{v: true}
	for _, in := range c.Instructions {
		if in == v {
			continue
		}
		for _, x := range in.Operands {
			if !dep[x] {
				continue
			}
			if !isElementwise(in) || !in.Shape.SameDims(v.Shape) || !x.Shape.SameDims(v.Shape) {
				return false
			}
			dep[in] = true
		}
	}
	return dep[c.Root]
}

// gemmEpilogue is the output stage of the GEMM of dot at the element at idx (the
// dot's multi-index) whose product is v (a register value of the dot's type): the
// kernel's root at idx, or v itself when the dot is the root.
func (l *lowering) gemmEpilogue(g *gen, dot *hlo.Instruction, idx []spirv.ID, v spirv.ID) spirv.ID {
	if dot == l.c.Root {
		return v
	}
	g.define(dot, idx, []spirv.ID{v})
	return g.emit(l.c.Root, idx)
}

// gemmEpilogue4 is the epilogue of an output's vec4 group group: the four
// products lanes (f32, as the GEMM accumulates) at row index rowIdx and column
// quad quad, through the epilogue, as the four values to store (register values
// of the output's dtype).
func (l *lowering) gemmEpilogue4(g *gen, dot *hlo.Instruction, rowIdx []spirv.ID, group, quad spirv.ID, lanes [4]spirv.ID) (vals [4]spirv.ID) {
	k, f := g.k, g.k.f
	g.scoped(func() {
		idxs := k.epilogueLanes(dot.Shape.Dims, rowIdx, f.IMul(group, k.ic(4)), quad, group)
		for j := range vals {
			vals[j] = l.gemmEpilogue(g, dot, idxs[j], k.round(lanes[j], dot.Shape.DType))
		}
	})
	return vals
}

// storeVec4 writes four register values of dt (f32, f16 or bf16) as vec4 group
// group of out4, a vec4 view of an output holding dt: one vector store.
func (k *kernel) storeVec4(out4 spirv.Buffer, group spirv.ID, lanes [4]spirv.ID, dt hlo.DType) {
	var st [4]spirv.ID
	for j, v := range lanes {
		st[j] = k.toStore(v, dt)
	}
	k.f.StoreElem(out4, group, k.f.CompositeConstruct(k.vec4Type(dt), st[:]...))
}

// epilogueInPlace is the GEMM's InPlace: nil for a bare dot; with an epilogue,
// the inputs it reads only at the element being stored (a residual), which the
// store stage reads just before it overwrites them, by the invocation that writes
// them (the product's operands are read elsewhere and never qualify).
func (l *lowering) epilogueInPlace(dot *hlo.Instruction) []bool {
	if dot == l.c.Root {
		return nil
	}
	return inPlaceInputs(l.c, -1)
}

// epilogueLanes registers the four elements of C at row index rowIdx (the dot's
// leading dims) and columns col0+4q+j (j < 4) as the lanes of vec4 group group, so
// that the epilogue's inputs of the output's dims (a residual), or of its column
// dim alone (a bias row), are read as vec4 loads. It returns their indices.
func (k *kernel) epilogueLanes(dims []int64, rowIdx []spirv.ID, lin0, quad, group spirv.ID) [4][]spirv.ID {
	f := k.f
	var idxs [4][]spirv.ID
	n := dims[len(dims)-1]
	for j := range int64(4) {
		col := f.IAdd(f.IMul(quad, k.ic(4)), k.ic(j))
		lin := f.IAdd(lin0, k.ic(j))
		idx := append(append([]spirv.ID{}, rowIdx...), col)
		k.linear[fmt.Sprint(idx, dims)] = lin
		k.linear[fmt.Sprint([]spirv.ID{col}, []int64{n})] = col
		k.lanes[lin] = lane{group: group, u: uint32(j)}
		k.lanes[col] = lane{group: quad, u: uint32(j)}
		idxs[j] = idx
	}
	return idxs
}
