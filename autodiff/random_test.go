package autodiff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// Randomised instances of the rules with many attributes: each family draws shapes
// and attributes from a seeded generator and runs the finite-difference check.

const randomInstances = 12

func perm(r *rand.Rand, n int) []int64 {
	p := make([]int64, n)
	for i, v := range r.Perm(n) {
		p[i] = int64(v)
	}
	return p
}

func TestRandomConvolutionVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var cases []fdCase
	for len(cases) < randomInstances {
		if c, ok := randomConv(r, len(cases)); ok {
			cases = append(cases, c)
		}
	}
	runFD(t, cases)
}

// randomConv draws a convolution: 1 or 2 spatial dims, random dim labels, strides,
// dilations, padding (negative too) and feature or batch groups.
func randomConv(r *rand.Rand, k int) (fdCase, bool) {
	ns := 1 + r.IntN(2)
	rank := ns + 2
	fgc, bgc := int64(1), int64(1)
	switch r.IntN(3) {
	case 1:
		fgc = int64(2 + r.IntN(2))
	case 2:
		bgc = 2
	}
	batch := int64(1+r.IntN(2)) * bgc
	cin := fgc * int64(1+r.IntN(2))
	cout := fgc * bgc * int64(1+r.IntN(2))
	ip, kp, op := perm(r, rank), perm(r, rank), perm(r, rank)
	dims := hlo.ConvDims{InputBatch: ip[0], InputFeature: ip[1], InputSpatial: ip[2:],
		KernelOutput: kp[0], KernelInput: kp[1], KernelSpatial: kp[2:],
		OutputBatch: op[0], OutputFeature: op[1], OutputSpatial: op[2:]}
	xd, kd := make([]int64, rank), make([]int64, rank)
	xd[dims.InputBatch], xd[dims.InputFeature] = batch, cin
	kd[dims.KernelOutput], kd[dims.KernelInput] = cout, cin/fgc
	w := make([]hlo.WindowDim, ns)
	for i := range ns {
		w[i] = win(int64(1+r.IntN(3)), int64(1+r.IntN(3)), int64(r.IntN(4)-1), int64(r.IntN(4)-1),
			int64(1+r.IntN(2)), int64(1+r.IntN(2)))
		w[i].WindowReversal = r.IntN(4) == 0
		size := int64(2 + r.IntN(5))
		xd[dims.InputSpatial[i]], kd[dims.KernelSpatial[i]] = size, w[i].Size
		if dilated(size, w[i].BaseDilation)+w[i].PadLow+w[i].PadHigh < dilated(w[i].Size, w[i].WindowDilation) {
			return fdCase{}, false
		}
	}
	name := fmt.Sprintf("conv%d x%v k%v fgc%d bgc%d %v", k, xd, kd, fgc, bgc, w)
	return convCase(name, f64s(xd...), f64s(kd...), w, dims, fgc, bgc), true
}

func TestRandomDotVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var cases []fdCase
	for k := range randomInstances {
		nb, nc := r.IntN(2), r.IntN(3)
		lf, rf := r.IntN(2), r.IntN(2)
		lrank, rrank := nb+nc+lf, nb+nc+rf
		lp, rp := perm(r, lrank), perm(r, rrank)
		ld, rd := make([]int64, lrank), make([]int64, rrank)
		d := hlo.DotDims{LhsBatch: lp[:nb], RhsBatch: rp[:nb], LhsContracting: lp[nb : nb+nc], RhsContracting: rp[nb : nb+nc]}
		for i := range nb + nc {
			size := int64(1 + r.IntN(3))
			ld[lp[i]], rd[rp[i]] = size, size
		}
		for i := nb + nc; i < lrank; i++ {
			ld[lp[i]] = int64(1 + r.IntN(3))
		}
		for i := nb + nc; i < rrank; i++ {
			rd[rp[i]] = int64(1 + r.IntN(3))
		}
		cases = append(cases, fdCase{name: fmt.Sprintf("dot%d %v·%v %+v", k, ld, rd, d),
			params: []hlo.Shape{f64s(ld...), f64s(rd...)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.DotGeneral(ps[0], ps[1], d)
			}})
	}
	runFD(t, cases)
}

func TestRandomReduceAndBroadcastVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	ops := []hlo.Opcode{hlo.OpAdd, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum}
	inits := map[hlo.Opcode]float64{hlo.OpAdd: 0.5, hlo.OpMultiply: 1.5, hlo.OpMaximum: -1e300, hlo.OpMinimum: 1e300}
	var cases []fdCase
	for k := range randomInstances {
		rank := 1 + r.IntN(3)
		xd := make([]int64, rank)
		for i := range xd {
			xd[i] = int64(1 + r.IntN(4))
		}
		p := perm(r, rank)
		dims := p[:1+r.IntN(rank)]
		op := ops[r.IntN(len(ops))]
		cases = append(cases, reduceCase(fmt.Sprintf("reduce%d %v %v over %v", k, op, xd, dims), op, inits[op], f64s(xd...), dims...))

		// A broadcast of the same operand into a larger rank, operand dims placed at
		// random (increasing or not).
		out := rank + r.IntN(3)
		place := perm(r, out)[:rank]
		od := make([]int64, out)
		for i := range od {
			od[i] = int64(1 + r.IntN(3))
		}
		for i, d := range place {
			od[d] = xd[i]
		}
		cases = append(cases, fdCase{name: fmt.Sprintf("broadcast%d %v to %v at %v", k, xd, od, place),
			params: []hlo.Shape{f64s(xd...)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Broadcast(ps[0], od, place)
			}})
	}
	runFD(t, cases)
}

func TestRandomWindowAndPadVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	var cases []fdCase
	for len(cases) < 2*randomInstances {
		rank := 1 + r.IntN(2)
		xd := make([]int64, rank)
		w := make([]hlo.WindowDim, rank)
		pads := make([]hlo.PadDim, rank)
		op := []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum}[r.IntN(2)]
		ok := true
		for i := range rank {
			xd[i] = int64(2 + r.IntN(5))
			w[i] = win(int64(1+r.IntN(3)), int64(1+r.IntN(3)), int64(r.IntN(3)), int64(r.IntN(3)),
				int64(1+r.IntN(2)), int64(1+r.IntN(2)))
			ok = ok && dilated(xd[i], w[i].BaseDilation)+w[i].PadLow+w[i].PadHigh >= dilated(w[i].Size, w[i].WindowDilation)
			pads[i] = hlo.PadDim{Low: int64(r.IntN(4) - 1), High: int64(r.IntN(4) - 1), Interior: int64(r.IntN(3))}
		}
		if !ok {
			continue
		}
		// -3 is below every input (drawn in [-2, 2]), 0.5 wins some windows; a huge
		// init would make windows of padding only dominate Σ ct·f and swamp the
		// finite differences.
		init := map[hlo.Opcode]float64{hlo.OpAdd: 0, hlo.OpMaximum: []float64{-3, 0.5}[r.IntN(2)]}[op]
		k := len(cases)
		cases = append(cases,
			reduceWindowCase(fmt.Sprintf("reduce-window%d %v %v %v", k, op, xd, w), op, init, f64s(xd...), w),
			fdCase{name: fmt.Sprintf("pad%d %v %v", k, xd, pads), params: []hlo.Shape{f64s(xd...), f64s()},
				build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Pad(ps[0], ps[1], pads) }})
	}
	runFD(t, cases)
}

// randomGather draws a gather: operand rank 1-3, an optional batching dim, a random
// start_index_map with some collapsed dims, random slice sizes, the index vector dim
// anywhere (or implicit), offset dims anywhere, and indices from -1 to past the end
// (clamped by gather).
func randomGather(r *rand.Rand) (x, idx hlo.Shape, gd hlo.GatherDims, sizes []int64) {
	rank := 1 + r.IntN(3)
	xd := make([]int64, rank)
	for i := range xd {
		xd[i] = int64(1 + r.IntN(4))
	}
	order := perm(r, rank)
	var batching []int64
	if rank >= 2 && r.IntN(2) == 0 {
		batching, order = order[:1], order[1:]
	}
	m := 1 + r.IntN(len(order))
	gd.StartIndexMap = append([]int64{}, order[:m]...)
	sizes = make([]int64, rank)
	for d := range rank {
		sizes[d] = 1
		if indexOf(batching, int64(d)) < 0 {
			sizes[d] = int64(1 + r.IntN(int(xd[d])))
		}
	}
	for _, d := range gd.StartIndexMap {
		if sizes[d] == 1 && r.IntN(2) == 0 {
			gd.CollapsedSliceDims = append(gd.CollapsedSliceDims, d)
		}
	}
	sortInts(gd.CollapsedSliceDims)
	// Indices: 1-2 batch dims (one matching the operand batching dim) and the index
	// vector dim.
	nbd := 1 + r.IntN(2)
	bdims := make([]int64, nbd)
	for i := range bdims {
		bdims[i] = int64(1 + r.IntN(3))
	}
	var idxBatch int
	if len(batching) > 0 {
		idxBatch = r.IntN(nbd)
		bdims[idxBatch] = xd[batching[0]]
	}
	implicit := m == 1 && r.IntN(2) == 0
	var id []int64
	ivd := int64(nbd)
	if implicit {
		id = bdims
	} else {
		ivd = int64(r.IntN(nbd + 1))
		id = append(append(append([]int64{}, bdims[:ivd]...), int64(m)), bdims[ivd:]...)
	}
	gd.IndexVectorDim = ivd
	if len(batching) > 0 {
		pos := int64(idxBatch)
		if !implicit && pos >= ivd {
			pos++
		}
		gd.OperandBatchingDims, gd.StartIndicesBatchingDims = batching, []int64{pos}
	}
	nOffset := rank - len(gd.CollapsedSliceDims) - len(batching)
	outRank := nbd + nOffset
	gd.OffsetDims = append([]int64{}, perm(r, outRank)[:nOffset]...)
	sortInts(gd.OffsetDims)
	return f64s(xd...), s32s(id...), gd, sizes
}

func sortInts(s []int64) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// indicesFrom draws index values from -1 to 4 (the largest dim is 4).
func indicesFrom(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
	if s.DType.IsFloat() {
		return nil
	}
	return randomLiteral(r, s, -1, 5)
}

func TestRandomGatherScatterVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	var cases []fdCase
	for k := range randomInstances {
		x, idx, gd, sizes := randomGather(r)
		cases = append(cases, fdCase{name: fmt.Sprintf("gather%d %v %v %+v %v", k, x, idx, gd, sizes),
			params: []hlo.Shape{x, idx}, gen: indicesFrom,
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Gather(ps[0], ps[1], gd, sizes)
			}})
		// The scatter-add with the transposed dimension numbers, updates shaped like
		// the gather's result.
		sd := hlo.ScatterDims{UpdateWindowDims: gd.OffsetDims, InsertedWindowDims: gd.CollapsedSliceDims,
			ScatterDimsToOperandDims: gd.StartIndexMap, IndexVectorDim: gd.IndexVectorDim,
			InputBatchingDims: gd.OperandBatchingDims, ScatterIndicesBatchingDims: gd.StartIndicesBatchingDims}
		ub := hlo.NewBuilder("shape")
		g := ub.Gather(ub.Parameter(x, ""), ub.Parameter(idx, ""), gd, sizes)
		if ub.Err() != nil {
			t.Fatalf("gather%d: %v", k, ub.Err())
		}
		cases = append(cases, fdCase{name: fmt.Sprintf("scatter%d %v %v %+v", k, x, idx, sd),
			params: []hlo.Shape{x, idx, g.Shape}, gen: indicesFrom,
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Scatter(ps[:1], ps[1], ps[2:], b.Reducer(hlo.OpAdd, hlo.F64), sd)
			}})
	}
	runFD(t, cases)
}
