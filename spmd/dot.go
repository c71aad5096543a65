package spmd

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// dot partitions a dot by where its operands are tiled:
//
//   - a contracting dimension tiled (on either operand): both operands are
//     moved to tiles of the contracting dimensions only (the other operand's
//     matching dimension sliced alike), each device contracts its tiles, and
//     the devices holding the other tiles all-reduce the partial sums (row-
//     parallel): the result is whole on every device;
//   - otherwise batch and non-contracting dimensions keep their tiles in the
//     result (data- and column-parallel): the batch tiles of the first
//     operand that has them, the rhs's batch dimensions moved to them; where
//     the operands' free tiles would leave some result tile on no device, the
//     rhs's free dimensions are gathered.
func (p *partitioner) dot(in *hlo.Instruction) (value, error) {
	dd := in.Attrs.Dot
	lhs, rhs := p.operand(in, 0), p.operand(in, 1)
	if dd == nil || lhs.lay == nil || rhs.lay == nil {
		return p.whole(in)
	}
	lr, rr := in.Operands[0].Shape.Rank(), in.Operands[1].Shape.Rank()
	if anyTiled(lhs.lay, dd.LhsContracting) || anyTiled(rhs.lay, dd.RhsContracting) {
		return p.contractingDot(in, lhs, rhs)
	}
	nb := len(dd.LhsBatch)
	lf, rf := freeDims(lr, dd.LhsBatch, dd.LhsContracting), freeDims(rr, dd.RhsBatch, dd.RhsContracting)
	batchFrom, batchDims := lhs.lay, dd.LhsBatch
	if !anyTiled(lhs.lay, dd.LhsBatch) && anyTiled(rhs.lay, dd.RhsBatch) {
		batchFrom, batchDims = rhs.lay, dd.RhsBatch
	}
	// The result's dimensions: batch, lhs free, rhs free (docs of DotGeneral).
	result := func(lhsFree, rhsFree bool) *layout {
		tiles := ones(in.Shape.Rank())
		for i, k := range batchDims {
			tiles[i] = batchFrom.tiles[k]
		}
		for i, k := range lf {
			if lhsFree {
				tiles[nb+i] = lhs.lay.tiles[k]
			}
		}
		for i, k := range rf {
			if rhsFree {
				tiles[nb+len(lf)+i] = rhs.lay.tiles[k]
			}
		}
		return with(tiles, p.n, func(d int) []int64 {
			c := make([]int64, len(tiles))
			for i, k := range batchDims {
				c[i] = batchFrom.coord[d][k]
			}
			for i, k := range lf {
				if lhsFree {
					c[nb+i] = lhs.lay.coord[d][k]
				}
			}
			for i, k := range rf {
				if rhsFree {
					c[nb+len(lf)+i] = rhs.lay.coord[d][k]
				}
			}
			return c
		})
	}
	target := result(true, true)
	if !target.valid() {
		target = result(true, false)
	}
	if !target.valid() {
		target = result(false, false)
	}
	// Each operand is moved to its projection of the result's layout.
	lsrc, rsrc := make([]int, lr), make([]int, rr)
	for i := range lsrc {
		lsrc[i] = -1
	}
	for i := range rsrc {
		rsrc[i] = -1
	}
	for i := range nb {
		lsrc[dd.LhsBatch[i]], rsrc[dd.RhsBatch[i]] = i, i
	}
	for i, k := range lf {
		lsrc[k] = nb + i
	}
	for i, k := range rf {
		rsrc[k] = nb + len(lf) + i
	}
	return p.localDot(in, lhs, rhs, project(target, lsrc), project(target, rsrc), target)
}

// contractingDot contracts tiles of the contracting dimensions and all-reduces.
func (p *partitioner) contractingDot(in *hlo.Instruction, lhs, rhs value) (value, error) {
	dd := in.Attrs.Dot
	from, fromDims := lhs.lay, dd.LhsContracting
	if !anyTiled(lhs.lay, dd.LhsContracting) {
		from, fromDims = rhs.lay, dd.RhsContracting
	}
	onDims := func(rank int, dims []int64) *layout {
		src := make([]int, rank)
		for i := range src {
			src[i] = -1
		}
		for i, k := range dims {
			src[k] = int(fromDims[i])
		}
		return project(from, src)
	}
	lt := onDims(in.Operands[0].Shape.Rank(), dd.LhsContracting)
	rt := onDims(in.Operands[1].Shape.Rank(), dd.RhsContracting)
	v, err := p.localDot(in, lhs, rhs, lt, rt, replicated(in.Shape.Rank(), p.n))
	if err != nil {
		return v, err
	}
	var across []int
	for _, k := range dd.LhsContracting {
		if lt.tiles[k] > 1 {
			across = append(across, int(k))
		}
	}
	v.in = p.collective(hlo.OpAllReduce, v.in, lt.groups(across), nil, p.b.Reducer(hlo.OpAdd, in.Shape.DType))
	return v, nil
}

// localDot moves the operands to lt and rt and contracts them into the tile of
// layout out.
func (p *partitioner) localDot(in *hlo.Instruction, lhs, rhs value, lt, rt, out *layout) (value, error) {
	l, err := p.reshard(lhs, in.Operands[0].Shape, lt, in.Name)
	if err != nil {
		return value{}, err
	}
	r, err := p.reshard(rhs, in.Operands[1].Shape, rt, in.Name)
	if err != nil {
		return value{}, err
	}
	local, err := out.localShape(in.Shape, in.Name)
	if err != nil {
		return value{}, err
	}
	return p.emit(in, []*hlo.Instruction{l, r}, local, out)
}

func anyTiled(l *layout, dims []int64) bool {
	for _, k := range dims {
		if l.tiles[k] > 1 {
			return true
		}
	}
	return false
}

// freeDims are the dimensions of a dot operand that are neither batch nor
// contracting, in order.
func freeDims(rank int, batch, contracting []int64) []int {
	var out []int
	for k := range rank {
		if !slices.Contains(batch, int64(k)) && !slices.Contains(contracting, int64(k)) {
			out = append(out, k)
		}
	}
	return out
}
