package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Sub-pixel phases of an lhs-dilated convolution. The input gradient of a
// stride-s convolution is a convolution over the gradient dilated by s (s−1
// holes between neighbours): an output pixel o reads input position
// o·stride + t − padLow at tap t, a real pixel only where that is a multiple of
// s, so in each spatial dim only the taps t ≡ padLow − o·stride (mod s) read
// anything; the others multiply a hole, a zero ((s²−1)/s² of a 2-D window's
// multiply-adds at stride s). Which taps those are depends only on o mod s, the
// output pixel's phase. The implicit GEMM then orders its rows phase-major
// (phase, then batch and o div s in each dim) with each phase's rows padded to a
// whole number of blocks, so that a block's rows share one phase and its tap
// loop steps over just that phase's taps: s⁻ᵈ of the window, as if the
// convolution were s^d sub-pixel convolutions, one per phase, in one dispatch.
// Padding rows (past a phase's pixels, or past the output's edge where its size
// is not a multiple of s) are computed from clamped indices and not stored. The
// taps skipped are exactly the hole positions cpuref skips too, so the sum is
// over the same terms in the same order.

// convPhases is the phase-major row order of an lhs-dilated implicit GEMM.
type convPhases struct {
	dil   []int64 // per spatial dim, the lhs dilation (1: one phase)
	q     []int64 // per spatial dim, output positions per phase: ⌈O/dil⌉
	out   []int64 // the output's spatial sizes
	batch int64
	count int64 // row slots per phase: batch × ∏q
	per   int64 // rows per phase: count rounded up to a whole block
}

// phasesFor is the phase-major order for cg at rm rows per block, or nil where
// it does not apply: no lhs dilation, rhs dilation in a dilated dim (the valid
// taps are then not one residue class), image rows ordered batch-minor, a long
// contraction (split over taps: phases would not keep to a block's tap range),
// or padding rows past half the work.
func phasesFor(cg convGEMM, rm int64, t Target) *convPhases {
	p := &convPhases{batch: cg.rowDims[0], out: cg.rowDims[1:]}
	phased := false
	for _, w := range cg.w {
		d := max(w.BaseDilation, 1)
		if d > 1 && max(w.WindowDilation, 1) != 1 {
			return nil
		}
		phased = phased || d > 1
		p.dil = append(p.dil, d)
	}
	if !phased || cg.batchMinor || product(cg.taps) >= convSplitTaps || convGEMMParts(cg, t) != 1 {
		return nil
	}
	p.count = p.batch
	for s, o := range p.out {
		p.q = append(p.q, ceilDiv(o, p.dil[s]))
		p.count *= p.q[s]
	}
	p.per = ceilDiv(p.count, rm) * rm
	if p.rows() > 2*cg.m {
		return nil
	}
	return p
}

// rows is the GEMM's rows in phase-major order.
func (p *convPhases) rows() int64 { return product(p.dil) * p.per }

// splitRow is row's output batch and spatial indices (of a padding row: clamped
// to its phase's last slot, maybe past the output's edge).
func (p *convPhases) splitRow(k *kernel, row spirv.ID) []spirv.ID {
	f := k.f
	within := k.clampHigh(f.SRem(row, k.ic(p.per)), p.count-1)
	idx := k.delinearize(within, append([]int64{p.batch}, p.q...))
	phase := k.delinearize(f.SDiv(row, k.ic(p.per)), p.dil)
	for s, d := range p.dil {
		if d > 1 {
			idx[1+s] = f.IAdd(f.IMul(idx[1+s], k.ic(d)), phase[s])
		}
	}
	return idx
}

// valid is whether row stands for an output pixel (not a padding row).
func (p *convPhases) valid(k *kernel, row spirv.ID) spirv.ID {
	f := k.f
	conds := []spirv.ID{}
	if p.count < p.per {
		conds = append(conds, f.Less(f.SRem(row, k.ic(p.per)), k.ic(p.count)))
	}
	idx := p.splitRow(k, row)
	for s, o := range p.out {
		if o%p.dil[s] != 0 {
			conds = append(conds, f.Less(idx[1+s], k.ic(o)))
		}
	}
	return k.all(conds...)
}

// loopTaps runs body for the taps of the phase of the block at row0, in
// row-major order: in each dilated dim from the phase's first tap in steps of
// the dilation.
func (p *convPhases) loopTaps(g *gen, w []hlo.WindowDim, taps []int64, row0 spirv.ID, body func(pos []spirv.ID)) {
	k, f := g.k, g.k.f
	phase := k.delinearize(f.SDiv(row0, k.ic(p.per)), p.dil)
	var nest func(s int, pos []spirv.ID)
	nest = func(s int, pos []spirv.ID) {
		switch {
		case s == len(taps):
			g.scoped(func() { body(pos) })
		case p.dil[s] == 1:
			k.loop(taps[s], func(t spirv.ID) { nest(s+1, append(pos[:s:s], t)) })
		default:
			// The first tap t ≥ 0 with t ≡ padLow − phase·stride (mod dil).
			d := k.ic(p.dil[s])
			r := f.ISub(k.ic(w[s].PadLow), f.IMul(phase[s], k.ic(w[s].Stride)))
			t0 := f.SRem(f.IAdd(f.SRem(r, d), d), d)
			k.countLoop(ceilDiv(taps[s], p.dil[s]), func() {
				f.Range(t0, k.ic(taps[s]), d, func(t spirv.ID) { nest(s+1, append(pos[:s:s], t)) })
			})
		}
	}
	nest(0, nil)
}
