package codegen

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Sort is a bitonic sorting network over each row (the elements along the sort
// dimension), padded to a power of two P. It sorts a permutation rather than the
// data: a scratch buffer holds, for every row position, the original position of the
// element now there. Every comparison orders two elements by the inlined comparator
// and breaks ties by original position, so the order is total and the result is the
// stable sort (cpuref always sorts stably); padding positions compare greater than
// every element. The network runs as log2(P)·(log2(P)+1)/2 dispatches of one kernel
// (the stage's block and stride come in push constants), each invocation handling
// one compare-exchange; a first dispatch writes the identity permutation and a last
// one gathers every operand through the permutation into the outputs.

// sortSizes is how a sort lays out its rows: Lower and Facts share it. total is
// zero for an empty sort (no dispatches).
func (l *lowering) sortSizes() (s sortSpec, total int64, err error) {
	root := l.c.Root
	dim := int(root.Attrs.Dimensions[0])
	dims := root.Operands[0].Shape.Dims
	n := dims[dim]
	total = product(dims)
	if total == 0 {
		return s, 0, nil
	}
	rows := total / n
	p := int64(1)
	if n > 1 {
		p = int64(1) << bits.Len64(uint64(n-1))
	}
	permDT := hlo.S32
	if l.wide || rows*p >= 1<<31 {
		if !l.t.Int64 {
			return s, 0, fmt.Errorf("%s: sorting %d padded elements needs 64-bit index arithmetic (shaderInt64), which the target lacks", root.Name, rows*p)
		}
		permDT = hlo.S64
	}
	return sortSpec{root: root, dim: dim, n: n, p: p, rows: rows, permDT: permDT}, total, nil
}

func (l *lowering) lowerSort() error {
	s, total, err := l.sortSizes()
	if err != nil || total == 0 {
		return err
	}
	rows, p, permDT := s.rows, s.p, s.permDT
	s.perm = l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, rows*p*int64(permDT.Size()))
	if err := l.sortInit(s); err != nil {
		return err
	}
	if p > 1 {
		step, err := l.sortStepKernel(s)
		if err != nil {
			return err
		}
		for size := int64(2); size <= p; size *= 2 {
			for stride := size / 2; stride >= 1; stride /= 2 {
				d := step
				d.Push = make([]byte, 8)
				binary.LittleEndian.PutUint32(d.Push[0:], uint32(size))
				binary.LittleEndian.PutUint32(d.Push[4:], uint32(stride))
				l.p.Dispatches = append(l.p.Dispatches, d)
			}
		}
	}
	return l.sortGather(s)
}

// sortSpec is what the sort dispatches share.
type sortSpec struct {
	root       *hlo.Instruction
	dim        int
	n, p, rows int64
	perm       int // scratch index of the permutation
	permDT     hlo.DType
}

// bindPerm binds the permutation buffer.
func (s sortSpec) bindPerm(k *kernel, access spirv.Access) spirv.Buffer {
	return k.bind(Arg{Kind: ArgScratch, Index: s.perm}, s.permDT, access)
}

// elemIndex is the operand index of position pos (an original position) of row r.
func (s sortSpec) elemIndex(k *kernel, r, pos spirv.ID) []spirv.ID {
	dims := s.root.Operands[0].Shape.Dims
	var rowDims []int64
	for d, size := range dims {
		if d != s.dim {
			rowDims = append(rowDims, size)
		}
	}
	return scatterIndex(len(dims), []int64{int64(s.dim)}, []spirv.ID{pos}, k.delinearize(r, rowDims))
}

// sortInit writes the identity permutation.
func (l *lowering) sortInit(s sortSpec) error {
	k := l.newKernel("sort_init", defaultLocal)
	perm := s.bindPerm(k, 0)
	count := s.rows * s.p
	groups := k.gridStride(count, func(i spirv.ID) {
		pos := k.f.SRem(i, k.ic(s.p))
		k.f.StoreElem(perm, i, k.f.Convert(k.storeType(s.permDT), pos))
	})
	return l.add(k, groups)
}

// sortStepKernel builds the compare-exchange kernel of one bitonic stage: push
// constants (size, stride). Invocation t handles row t/(P/2) and the pair (i,
// i+stride) where i is the t-th index with bit stride clear; the pair is put in
// ascending order when i's size-block is even-numbered, descending otherwise.
func (l *lowering) sortStepKernel(s sortSpec) (Dispatch, error) {
	k := l.newKernel("sort_step", defaultLocal)
	perm := s.bindPerm(k, 0)
	u32 := k.m.TypeU32()
	pc := k.m.PushConstants("stage", spirv.Member{Name: "size", Type: u32}, spirv.Member{Name: "stride", Type: u32})
	g := l.kernelGen(k)
	f := k.f
	half := s.p / 2
	count := s.rows * half
	size := k.toIndex(f.LoadMember(pc, 0))
	stride := k.toIndex(f.LoadMember(pc, 1))
	groups := k.gridStride(count, func(t spirv.ID) {
		g.scoped(func() {
			r, q := f.SDiv(t, k.ic(half)), f.SRem(t, k.ic(half))
			// i = q with a zero bit inserted at stride's position.
			low := f.SRem(q, stride)
			i := f.IAdd(f.IMul(f.ISub(q, low), k.ic(2)), low)
			j := f.IAdd(i, stride)
			base := f.IMul(r, k.ic(s.p))
			pi, pj := f.IAdd(base, i), f.IAdd(base, j)
			a := k.toIndex(f.LoadElem(perm, pi))
			b := k.toIndex(f.LoadElem(perm, pj))
			ascending := f.Equal(f.And(i, size), k.ic(0))
			outOfOrder := f.Select(ascending, l.sortLess(g, s, r, b, a), l.sortLess(g, s, r, a, b))
			f.If(outOfOrder, func() {
				f.StoreElem(perm, pi, k.f.Convert(k.storeType(s.permDT), b))
				f.StoreElem(perm, pj, k.f.Convert(k.storeType(s.permDT), a))
			}, nil)
		})
	})
	d, err := k.finish(groups)
	if err != nil {
		return Dispatch{}, err
	}
	d.Kernel.PushConstantSize = 8
	return d, nil
}

// sortLess is the total order of the sort: padding (position >= n) after every
// element; otherwise the comparator, with ties broken by original position.
func (l *lowering) sortLess(g *gen, s sortSpec, r, a, b spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	n := k.ic(s.n)
	aValid, bValid := f.Less(a, n), f.Less(b, n)
	// Padding positions read a real element (clamped) whose answer is discarded.
	last := k.ic(s.n - 1)
	ca := f.Select(aValid, a, last)
	cb := f.Select(bValid, b, last)
	ia, ib := s.elemIndex(k, r, ca), s.elemIndex(k, r, cb)
	var ab, ba []spirv.ID
	for _, x := range s.root.Operands {
		va, vb := g.emit(x, ia), g.emit(x, ib)
		ab = append(ab, va, vb)
		ba = append(ba, vb, va)
	}
	comp := s.root.Called[0]
	lt := g.call(comp, ab)[0]
	gt := g.call(comp, ba)[0]
	tie := f.LogicalAnd(f.LogicalNot(gt), f.Less(a, b))
	less := f.LogicalOr(lt, tie)
	return f.Select(aValid, f.Select(bValid, less, k.m.ConstBool(true)), k.m.ConstBool(false))
}

// sortGather writes output j at position i of row r from operand j at the original
// position perm[r, i].
func (l *lowering) sortGather(s sortSpec) error {
	k := l.newKernel("sort_gather", defaultLocal)
	perm := s.bindPerm(k, spirv.ReadOnly)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	f := k.f
	dims := s.root.Operands[0].Shape.Dims
	count := s.rows * s.n
	groups := k.gridStride(count, func(t spirv.ID) {
		g.scoped(func() {
			idx := k.delinearize(t, dims)
			var rowIdx []spirv.ID
			for d, v := range idx {
				if d != s.dim {
					rowIdx = append(rowIdx, v)
				}
			}
			var rowDims []int64
			for d, size := range dims {
				if d != s.dim {
					rowDims = append(rowDims, size)
				}
			}
			r := k.linearize(rowIdx, rowDims)
			src := k.toIndex(f.LoadElem(perm, f.IAdd(f.IMul(r, k.ic(s.p)), idx[s.dim])))
			from := s.elemIndex(k, r, src)
			for j, x := range s.root.Operands {
				k.store(outs[j], t, g.emit(x, from), l.p.Outputs[j].DType)
			}
		})
	})
	return l.add(k, groups)
}
