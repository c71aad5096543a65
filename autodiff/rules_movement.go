package autodiff

import (
	"github.com/vkxla/vkxla/hlo"
)

// VJP rules of the data-movement ops: each is linear, and its VJP is its transpose
// (broadcast ↔ sum, slice ↔ pad, dynamic-slice ↔ dynamic-update-slice, …).

func movementRows() map[hlo.Opcode]row {
	return map[hlo.Opcode]row{
		hlo.OpBroadcast:          arrayVJP(vjpBroadcast),
		hlo.OpReshape:            arrayVJP(vjpReshape),
		hlo.OpTranspose:          arrayVJP(vjpTranspose),
		hlo.OpSlice:              arrayVJP(vjpSlice),
		hlo.OpConcatenate:        arrayVJP(vjpConcatenate),
		hlo.OpPad:                arrayVJP(vjpPad),
		hlo.OpReverse:            arrayVJP(vjpReverse),
		hlo.OpCopy:               arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) { return one(ct), nil }),
		hlo.OpDynamicSlice:       arrayVJP(vjpDynamicSlice),
		hlo.OpDynamicUpdateSlice: arrayVJP(vjpDynamicUpdateSlice),
		hlo.OpGather:             arrayVJP(vjpGather),
		hlo.OpScatter:            arrayVJP(vjpScatter),
	}
}

func one(x *hlo.Instruction) []*hlo.Instruction { return []*hlo.Instruction{x} }

// vjpBroadcast sums the cotangent over the new dimensions, then puts the kept ones
// in operand order (broadcast's dimensions need not increase).
func vjpBroadcast(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	dims := n.orig.Attrs.Dimensions
	added := hlo.Complement(ct.Shape.Rank(), dims)
	g := ct
	if len(added) > 0 {
		g = e.sum(ct, added)
	}
	// After the sum, operand dim i sits at the rank of dims[i] among dims.
	perm := make([]int64, len(dims))
	for i, d := range dims {
		for _, o := range dims {
			if o < d {
				perm[i]++
			}
		}
	}
	if !isIdentity(perm) {
		g = e.b.Transpose(g, perm...)
	}
	return one(g), nil
}

func isIdentity(perm []int64) bool {
	for i, p := range perm {
		if p != int64(i) {
			return false
		}
	}
	return true
}

func vjpReshape(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	return one(e.b.Reshape(ct, n.args[0].Shape.Dims...)), nil
}

func vjpTranspose(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	return one(e.b.Transpose(ct, inversePerm(n.orig.Attrs.Dimensions)...)), nil
}

func inversePerm(perm []int64) []int64 {
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return inv
}

// vjpSlice pads the cotangent back to the operand's shape with zeros: the stride
// becomes interior padding.
func vjpSlice(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	x := n.args[0]
	pads := make([]hlo.PadDim, x.Shape.Rank())
	for i, s := range n.orig.Attrs.Slice {
		m := ct.Shape.Dims[i]
		if m == 0 {
			pads[i] = hlo.PadDim{Low: x.Shape.Dims[i]}
			continue
		}
		last := s.Start + (m-1)*s.Stride
		pads[i] = hlo.PadDim{Low: s.Start, High: x.Shape.Dims[i] - last - 1, Interior: s.Stride - 1}
	}
	return one(e.b.Pad(ct, e.b.ScalarConstant(ct.Shape.DType, 0), pads)), nil
}

// vjpConcatenate slices each operand's part out of the cotangent.
func vjpConcatenate(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	dim := n.orig.Attrs.Dimensions[0]
	grads := make([]*hlo.Instruction, len(n.args))
	var at int64
	for i, x := range n.args {
		size := x.Shape.Dims[dim]
		if e.needs(n, i) {
			starts := make([]int64, ct.Shape.Rank())
			limits := append([]int64(nil), ct.Shape.Dims...)
			starts[dim], limits[dim] = at, at+size
			grads[i] = e.b.Slice(ct, starts, limits, nil)
		}
		at += size
	}
	return grads, nil
}

// vjpPad undoes the padding: negated edge padding (which also restores what a
// negative pad cut, as zeros), then a strided slice skips the interior padding. The
// padding value gets the cotangent's total minus what reached the operand.
func vjpPad(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	pads := n.orig.Attrs.Padding
	unpad := make([]hlo.PadDim, len(pads))
	starts, limits, strides := make([]int64, len(pads)), make([]int64, len(pads)), make([]int64, len(pads))
	for i, p := range pads {
		unpad[i] = hlo.PadDim{Low: -p.Low, High: -p.High}
		limits[i] = ct.Shape.Dims[i] - p.Low - p.High
		strides[i] = p.Interior + 1
	}
	zero := e.b.ScalarConstant(ct.Shape.DType, 0)
	gx := e.b.Slice(e.b.Pad(ct, zero, unpad), starts, limits, strides)
	grads := make([]*hlo.Instruction, 2)
	if e.needs(n, 0) {
		grads[0] = gx
	}
	if e.needs(n, 1) {
		grads[1] = e.b.Sub(e.sumAll(ct), e.sumAll(gx))
	}
	return grads, nil
}

func vjpReverse(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	return one(e.b.Reverse(ct, n.orig.Attrs.Dimensions...)), nil
}

// vjpDynamicSlice writes the cotangent into zeros at the same (clamped) starts; both
// ops clamp the same way, so the positions agree.
func vjpDynamicSlice(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	x := n.args[0]
	starts := n.args[1:]
	return one(e.b.DynamicUpdateSlice(e.zeros(x.Shape), ct, starts)), nil
}

// vjpDynamicUpdateSlice: the operand gets the cotangent with the window zeroed, the
// update gets the window.
func vjpDynamicUpdateSlice(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	upd := n.args[1]
	starts := n.args[2:]
	grads := make([]*hlo.Instruction, len(n.args))
	if e.needs(n, 0) {
		grads[0] = e.b.DynamicUpdateSlice(ct, e.zeros(upd.Shape.WithDType(ct.Shape.DType)), starts)
	}
	if e.needs(n, 1) {
		grads[1] = e.b.DynamicSlice(ct, starts, upd.Shape.Dims)
	}
	return grads, nil
}
