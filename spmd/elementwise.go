package spmd

import "github.com/vkxla/vkxla/hlo"

// elementwise partitions an elementwise instruction (unary, binary, compare,
// select, clamp, convert): the result takes the layout of its first tiled
// operand of the result's rank, every other such operand is moved to it (a
// replicated one sliced locally, a differently tiled one gathered first), and
// scalar operands are used whole. A whole operand made by a broadcast is
// broadcast again into the tile instead of sliced. Each device computes its tile.
func (p *partitioner) elementwise(in *hlo.Instruction) (value, error) {
	rank := in.Shape.Rank()
	var target *layout
	for i, o := range in.Operands {
		if l := p.operand(in, i).lay; l != nil && o.Shape.Rank() == rank && !l.isReplicated() {
			target = l
			break
		}
	}
	if target == nil {
		return p.whole(in)
	}
	local, err := target.localShape(in.Shape, in.Name)
	if err != nil {
		return value{}, err
	}
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		v := p.operand(in, i)
		if o.Shape.Rank() != rank {
			ops[i] = p.wholeOperand(in, i)
			continue
		}
		if o.Op == hlo.OpBroadcast && v.lay.isReplicated() && !v.lay.equal(target) {
			// Broadcast again, into this tile (the whole broadcast is left to
			// DCE where nothing else uses it).
			b, err := p.broadcastTo(o, target)
			if err != nil {
				return value{}, err
			}
			ops[i] = b.in
			continue
		}
		if ops[i], err = p.reshard(v, o.Shape, target, in.Name); err != nil {
			return value{}, err
		}
	}
	return p.emit(in, ops, local, target)
}
