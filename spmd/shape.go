package spmd

import "github.com/vkxla/vkxla/hlo"

// The rules of the ops that move dimensions: broadcast, transpose and reshape.
// A tiled dimension that maps to one dimension of the result stays tiled there;
// each device reshapes, transposes or broadcasts its own tile.

// project returns the layout of rank len(src) whose dimension i is l's
// dimension src[i] (whole where src[i] < 0).
func project(l *layout, src []int) *layout {
	tiles := ones(len(src))
	for i, k := range src {
		if k >= 0 {
			tiles[i] = l.tiles[k]
		}
	}
	return with(tiles, len(l.coord), func(d int) []int64 {
		c := make([]int64, len(src))
		for i, k := range src {
			if k >= 0 {
				c[i] = l.coord[d][k]
			}
		}
		return c
	})
}

// broadcast: result dimension dimensions[i] is operand dimension i. Its layout
// is the operand's, or the annotation where the operand is whole (a device then
// broadcasts into its tile only).
func (p *partitioner) broadcast(in *hlo.Instruction) (value, error) {
	x := p.operand(in, 0)
	target := project(x.lay, broadcastSource(in))
	if x.lay.isReplicated() && in.Sharding != nil && in.Sharding.Kind == hlo.ShardTiled {
		l, err := fromSharding(in.Sharding, in.Shape, p.n, in.Name)
		if err != nil {
			return value{}, err
		}
		target = l
	}
	return p.broadcastTo(in, target)
}

// broadcastSource maps each result dimension of a broadcast to its operand
// dimension (-1 for the new ones).
func broadcastSource(in *hlo.Instruction) []int {
	src := make([]int, in.Shape.Rank())
	for j := range src {
		src[j] = -1
	}
	for i, j := range in.Attrs.Dimensions {
		src[j] = i
	}
	return src
}

// broadcastTo emits the broadcast in straight into the tiles of target: the
// operand moved to its projection, each device broadcasting its tile. The
// elementwise rule uses it too, so that a broadcast operand of a tiled value is
// never built whole.
func (p *partitioner) broadcastTo(in *hlo.Instruction, target *layout) (value, error) {
	toOperand := make([]int, len(in.Attrs.Dimensions))
	for i, j := range in.Attrs.Dimensions {
		toOperand[i] = int(j)
	}
	op, err := p.reshard(p.operand(in, 0), in.Operands[0].Shape, project(target, toOperand), in.Name)
	if err != nil {
		return value{}, err
	}
	local, err := target.localShape(in.Shape, in.Name)
	if err != nil {
		return value{}, err
	}
	return p.emit(in, []*hlo.Instruction{op}, local, target)
}

// transpose: result dimension i is operand dimension dimensions[i].
func (p *partitioner) transpose(in *hlo.Instruction) (value, error) {
	x := p.operand(in, 0)
	src := make([]int, len(in.Attrs.Dimensions))
	for i, k := range in.Attrs.Dimensions {
		src[i] = int(k)
	}
	target := project(x.lay, src)
	local, err := target.localShape(in.Shape, in.Name)
	if err != nil {
		return value{}, err
	}
	return p.emit(in, []*hlo.Instruction{x.in}, local, target)
}

// reshape keeps one tiled dimension k tiled as result dimension j where the
// elements before them are as many (so both split the array at the same flat
// offsets) and the tile count divides dimension j; otherwise the operand is
// gathered.
func (p *partitioner) reshape(in *hlo.Instruction) (value, error) {
	x := p.operand(in, 0)
	tiled := x.lay.tiled()
	if len(tiled) == 0 {
		return p.whole(in)
	}
	j := -1
	if len(tiled) == 1 {
		j = reshapedDim(in.Operands[0].Shape.Dims, in.Shape.Dims, tiled[0], x.lay.tiles[tiled[0]])
	}
	if j < 0 {
		return p.whole(in)
	}
	k := tiled[0]
	tiles := ones(in.Shape.Rank())
	tiles[j] = x.lay.tiles[k]
	target := with(tiles, p.n, func(d int) []int64 {
		c := make([]int64, len(tiles))
		c[j] = x.lay.coord[d][k]
		return c
	})
	local, err := target.localShape(in.Shape, in.Name)
	if err != nil {
		return value{}, err
	}
	return p.emit(in, []*hlo.Instruction{x.in}, local, target)
}

// reshapedDim is the dimension of out that dimension k of in, split into t
// tiles, becomes: the one with as many elements before it, divisible by t; -1
// if none.
func reshapedDim(in, out []int64, k int, t int64) int {
	before := product(in[:k])
	for j := range out {
		if product(out[:j]) == before && out[j]%t == 0 && out[j] > 0 {
			return j
		}
	}
	return -1
}
