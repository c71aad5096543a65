package cpuref

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// The blocked, parallel contractions against the serial loops they replaced, kept
// here as the oracle: for every output element one accumulator, products added one
// at a time in the contracting order (f32 rounded after each multiply and each add).
// The results must be identical bit for bit (NaNs aside, whose payloads are not
// specified).

type serialAcc struct {
	f32 float32
	f64 float64
	i   int64
}

func serialAdd(out hlo.DType, acc *serialAcc, l, r *hlo.Literal, li, ri int) {
	switch {
	case out == hlo.F64:
		acc.f64 += float64(l.Float64(li) * r.Float64(ri))
	case out.IsFloat():
		acc.f32 += float32(float32(l.Float64(li)) * float32(r.Float64(ri)))
	default:
		acc.i += l.Int64(li) * r.Int64(ri)
	}
}

func serialStore(out *hlo.Literal, i int, acc serialAcc) {
	dt := out.DType()
	switch {
	case dt == hlo.F64:
		out.SetBits(i, fromFloat(dt, acc.f64))
	case dt.IsFloat():
		out.SetBits(i, fromFloat(dt, float64(acc.f32)))
	case dt == hlo.Pred:
		out.SetBool(i, acc.i != 0)
	default:
		out.SetBits(i, uint64(acc.i)&widthMask(dt))
	}
}

func serialDot(in *hlo.Instruction, lhs, rhs *hlo.Literal) *hlo.Literal {
	dn := in.Attrs.Dot
	ls, rs := lhs.Shape(), rhs.Shape()
	lhsFree := hlo.Complement(ls.Rank(), dn.LhsBatch, dn.LhsContracting)
	rhsFree := hlo.Complement(rs.Rank(), dn.RhsBatch, dn.RhsContracting)
	outDims := append(append(pick(ls.Dims, dn.LhsBatch), pick(ls.Dims, lhsFree)...), pick(rs.Dims, rhsFree)...)
	lStr, rStr := ls.Strides(), rs.Strides()
	var lk, rk []int64
	forEachIndex(pick(ls.Dims, dn.LhsContracting), func(c []int64) {
		var lo, ro int64
		for j, v := range c {
			lo += v * lStr[dn.LhsContracting[j]]
			ro += v * rStr[dn.RhsContracting[j]]
		}
		lk, rk = append(lk, lo), append(rk, ro)
	})
	nb, nl := len(dn.LhsBatch), len(lhsFree)
	out := hlo.NewLiteral(in.Shape)
	i := 0
	forEachIndex(outDims, func(idx []int64) {
		var lBase, rBase int64
		for j := 0; j < nb; j++ {
			lBase += idx[j] * lStr[dn.LhsBatch[j]]
			rBase += idx[j] * rStr[dn.RhsBatch[j]]
		}
		for j, d := range lhsFree {
			lBase += idx[nb+j] * lStr[d]
		}
		for j, d := range rhsFree {
			rBase += idx[nb+nl+j] * rStr[d]
		}
		var acc serialAcc
		for k := range lk {
			serialAdd(in.Shape.DType, &acc, lhs, rhs, int(lBase+lk[k]), int(rBase+rk[k]))
		}
		serialStore(out, i, acc)
		i++
	})
	return out
}

func serialConv(t *testing.T, in *hlo.Instruction, lhs, rhs *hlo.Literal) *hlo.Literal {
	g, err := newConvGeometry(in, lhs.Shape(), rhs.Shape())
	require.NoError(t, err)
	dn := g.dn
	out := hlo.NewLiteral(in.Shape)
	i := 0
	forEachIndex(in.Shape.Dims, func(idx []int64) {
		o := idx[dn.OutputFeature]
		fGroup, bGroup := o/g.outPerFGroup, o/g.outPerBGroup
		lBase := (bGroup*g.batchPerGroup+idx[dn.OutputBatch])*g.lStr[dn.InputBatch] +
			fGroup*g.inFeatPerGroup*g.lStr[dn.InputFeature]
		rBase := o * g.rStr[dn.KernelOutput]
		var acc serialAcc
		for c := int64(0); c < g.inFeatPerGroup; c++ {
			lc := lBase + c*g.lStr[dn.InputFeature]
			rc := rBase + c*g.rStr[dn.KernelInput]
			forEachIndex(g.kernelSpatial, func(k []int64) {
				if lo, ok := g.lhsOffset(idx, k); ok {
					serialAdd(in.Shape.DType, &acc, lhs, rhs, int(lc+lo), int(rc+g.rhsOffset(k)))
				}
			})
		}
		serialStore(out, i, acc)
		i++
	})
	return out
}

// randomLiteral fills a literal with values that make rounding matter: mixed
// magnitudes and signs, zeros of both signs, and (floats, when special) infinities
// and NaN.
func randomLiteral(r *rand.Rand, s hlo.Shape, special bool) *hlo.Literal {
	l := hlo.NewLiteral(s)
	for i := range l.NumElements() {
		if !s.DType.IsFloat() {
			l.SetBits(i, r.Uint64())
			continue
		}
		v := (r.Float64()*2 - 1) * math.Pow(2, float64(r.Intn(40)-20))
		switch x := r.Intn(40); {
		case x == 0:
			v = 0
		case x == 1:
			v = math.Copysign(0, -1)
		case x == 2 && special:
			v = math.Inf(1 - 2*r.Intn(2))
		case x == 3 && special:
			v = math.NaN()
		case x == 4:
			v = 1e-40 // an f32 subnormal
		}
		l.SetFloat64(i, v)
	}
	return l
}

var contractionTypes = []hlo.DType{hlo.F32, hlo.BF16, hlo.F16, hlo.F64, hlo.S32, hlo.S8, hlo.U16, hlo.S64, hlo.Pred}

func requireSameLiteral(t *testing.T, want, got *hlo.Literal, what string) {
	t.Helper()
	require.NoError(t, hlo.LiteralsEqual(got, want), what)
}

// TestDotMatchesSerialLoop: random dot shapes with batch dimensions anywhere,
// several and transposed contracting dimensions, every accumulation type, sizes
// from a single element to more than one row block and column panel.
func TestDotMatchesSerialLoop(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	ran, big := 0, 0
	for trial := range 160 {
		dt := contractionTypes[trial%(len(contractionTypes)-1)] // the builder refuses a pred dot
		nb, nc := r.Intn(3), r.Intn(3)
		nlf, nrf := r.Intn(3), r.Intn(3)
		size := func() int64 { return []int64{1, 2, 3, 5, 17, 40, 70}[r.Intn(7)] }
		batch, contr := make([]int64, nb), make([]int64, nc)
		for i := range batch {
			batch[i] = size() % 4
		}
		for i := range contr {
			contr[i] = size()
		}
		lf, rf := make([]int64, nlf), make([]int64, nrf)
		for i := range lf {
			lf[i] = size()
		}
		for i := range rf {
			rf[i] = size()
		}
		if trial%8 == 7 { // several column panels, contracting blocks and row blocks
			batch, contr, lf, rf = []int64{2}, []int64{10, 14}, []int64{20}, []int64{70}
			nc = 2
		}
		if work := prod(batch) * prod(contr) * prod(lf) * prod(rf); work > 400_000 {
			continue // keep the serial oracle quick
		}
		// Lay out each operand's dimensions in a random order.
		lDims, lb, lc := shuffleDims(r, batch, contr, lf)
		rDims, rb, rc := shuffleDims(r, batch, contr, rf)
		// Contracting dimensions may be listed in any order (the same pairing).
		perm := r.Perm(nc)
		dn := &hlo.DotDims{LhsBatch: lb, RhsBatch: rb, LhsContracting: permute(lc, perm), RhsContracting: permute(rc, perm)}
		ls, rs := hlo.MakeShape(dt, lDims...), hlo.MakeShape(dt, rDims...)
		b := hlo.NewBuilder("dot")
		x, y := b.Parameter(ls, "x"), b.Parameter(rs, "y")
		d := b.DotGeneral(x, y, *dn)
		require.NoError(t, b.Err())
		lhs, rhs := randomLiteral(r, ls, trial%3 == 0), randomLiteral(r, rs, trial%3 == 0)
		got, err := evalDot(newEvaluator(t.Context(), Limits{}), d, []*hlo.Literal{lhs, rhs})
		require.NoError(t, err)
		requireSameLiteral(t, serialDot(d, lhs, rhs), got, fmt.Sprintf("trial %d: %v · %v, %+v", trial, ls, rs, *dn))
		ran++
		if prod(rf) > wideLanes && prod(contr) > kBlock && prod(batch)*prod(lf) > rowBlock {
			big++
		}
	}
	require.Greater(t, ran, 80, "most trials must fit the oracle's budget")
	require.Greater(t, big, 3, "some trials span several column panels, contracting blocks and row blocks")
}

func shuffleDims(r *rand.Rand, batch, contr, free []int64) (dims, b, c []int64) {
	all := append(append(append([]int64(nil), batch...), contr...), free...)
	perm := r.Perm(len(all)) // perm[i]: where dimension i goes
	dims = make([]int64, len(all))
	for i, p := range perm {
		dims[p] = all[i]
	}
	for i := range batch {
		b = append(b, int64(perm[i]))
	}
	for i := range contr {
		c = append(c, int64(perm[len(batch)+i]))
	}
	return dims, b, c
}

func permute(v []int64, perm []int) []int64 {
	out := make([]int64, len(v))
	for i, p := range perm {
		out[i] = v[p]
	}
	return out
}

// TestConvolutionMatchesSerialLoop: random 1-D and 2-D convolutions with strides,
// padding (negative too), lhs and rhs dilation, window reversal, feature groups and
// batch groups, in random dimension layouts, every accumulation type.
func TestConvolutionMatchesSerialLoop(t *testing.T) {
	r := rand.New(rand.NewSource(71))
	ran, big := 0, 0
	for trial := range 200 {
		dt := contractionTypes[trial%len(contractionTypes)]
		ns := 1 + r.Intn(2)
		fgc, bgc := int64(1), int64(1)
		switch r.Intn(4) {
		case 1:
			fgc = int64(1 + r.Intn(3))
		case 2:
			bgc = int64(1 + r.Intn(3))
		}
		cPer, oPer := []int64{1, 2, 3, 5, 17, 40}[r.Intn(6)], int64(1+r.Intn(70))
		c := cPer * fgc
		o := oPer * fgc * bgc
		n := int64(1+r.Intn(3)) * bgc
		big7 := trial%8 == 7
		if big7 {
			ns, cPer, oPer, fgc, bgc = 2, 17, 70, 1, 1
			c, o, n = cPer, oPer, 1
		}
		win := make([]hlo.WindowDim, ns)
		in, k := make([]int64, ns), make([]int64, ns)
		for j := range win {
			k[j] = int64(1 + r.Intn(4))
			in[j] = int64(1 + r.Intn(12))
			if big7 {
				k[j], in[j] = 3, 7
			}
			win[j] = hlo.WindowDim{Size: k[j], Stride: int64(1 + r.Intn(3)), PadLow: int64(r.Intn(4) - 1), PadHigh: int64(r.Intn(4) - 1),
				WindowDilation: int64(1 + r.Intn(2)), BaseDilation: int64(1 + r.Intn(2)), WindowReversal: r.Intn(4) == 0}
		}
		outSp := make([]int64, ns)
		ok := true
		for j := range win {
			if outSp[j] = windowOutputDim(in[j], win[j]); outSp[j] <= 0 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		if work := n * o * cPer * prod(k) * prod(outSp); work > 400_000 {
			continue
		}
		lDims, lPos := layout(r, n, c, in)
		kDims, kPos := layout(r, c/fgc, o, k)
		oDims, oPos := layout(r, n/bgc, o, outSp)
		dn := &hlo.ConvDims{InputBatch: lPos[0], InputFeature: lPos[1], InputSpatial: lPos[2:],
			KernelInput: kPos[0], KernelOutput: kPos[1], KernelSpatial: kPos[2:],
			OutputBatch: oPos[0], OutputFeature: oPos[1], OutputSpatial: oPos[2:]}
		ls, ks, os := hlo.MakeShape(dt, lDims...), hlo.MakeShape(dt, kDims...), hlo.MakeShape(dt, oDims...)
		inst := &hlo.Instruction{Op: hlo.OpConvolution, Shape: os,
			Attrs: hlo.Attributes{Conv: dn, Window: win, FeatureGroupCount: fgc, BatchGroupCount: bgc}}
		lhs, rhs := randomLiteral(r, ls, trial%3 == 0), randomLiteral(r, ks, trial%3 == 0)
		got, err := evalConvolution(newEvaluator(t.Context(), Limits{}), inst, []*hlo.Literal{lhs, rhs})
		require.NoError(t, err, "trial %d", trial)
		requireSameLiteral(t, serialConv(t, inst, lhs, rhs), got,
			fmt.Sprintf("trial %d: %v * %v → %v, groups %d/%d, window %+v", trial, ls, ks, os, fgc, bgc, win))
		ran++
		if oPer > wideLanes && cPer*prod(k) > kBlock && n/bgc*prod(outSp) > rowBlock {
			big++
		}
	}
	require.Greater(t, ran, 80, "most trials must have a non-empty output")
	require.Greater(t, big, 3, "some trials span several column panels, contracting blocks and row blocks")
}

// layout places (batch, feature, spatial...) dimensions in a random order and
// returns the dims and where each went.
func layout(r *rand.Rand, batch, feature int64, spatial []int64) (dims, pos []int64) {
	all := append([]int64{batch, feature}, spatial...)
	perm := r.Perm(len(all))
	dims = make([]int64, len(all))
	for i, p := range perm {
		dims[p] = all[i]
		pos = append(pos, int64(p))
	}
	return dims, pos
}

func prod(v []int64) int64 {
	n := int64(1)
	for _, x := range v {
		n *= x
	}
	return n
}
