package spmd

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// reshard moves a partitioned value from its layout to another: nothing where
// they agree; a dynamic-slice of each device's tile where the value is
// replicated; otherwise an all-gather of the tiled dimensions, then the slice
// (always correct; the rules avoid it where they can).
func (p *partitioner) reshard(v value, global hlo.Shape, to *layout, where string) (*hlo.Instruction, error) {
	if v.lay.equal(to) {
		return v.in, nil
	}
	x := v.in
	if !v.lay.isReplicated() {
		x = p.gather(v)
	}
	if to.isReplicated() {
		return x, nil
	}
	return p.slice(x, global, to, where)
}

// gather all-gathers a value's tiled dimensions, one at a time: the result is
// the whole value on every device.
func (p *partitioner) gather(v value) *hlo.Instruction {
	if g, ok := p.gathered[v.in]; ok {
		return g
	}
	x, l := v.in, v.lay
	for _, k := range l.tiled() {
		x = p.collective(hlo.OpAllGather, x, l.groups([]int{k}), []int64{int64(k)}, nil)
		l = l.untile(k)
	}
	p.gathered[v.in] = x
	return x
}

// collective adds an all-gather or all-reduce over the partitions in groups of
// partition ids (one replica: a flattened device id is a partition id), each
// with its own channel.
func (p *partitioner) collective(op hlo.Opcode, x *hlo.Instruction, groups [][]int64, dims []int64, reducer *hlo.Computation) *hlo.Instruction {
	c := p.b.Collective(op, []*hlo.Instruction{x}, groups, dims, reducer)
	if c != nil && p.b.Err() == nil {
		p.channel++
		c.Attrs.HasChannelID, c.Attrs.ChannelID, c.Attrs.UseGlobalDeviceIDs = true, p.channel, true
		p.collectives++
	}
	return c
}

// slice cuts each device's tile of layout to out of a whole value x.
func (p *partitioner) slice(x *hlo.Instruction, global hlo.Shape, to *layout, where string) (*hlo.Instruction, error) {
	local, err := to.localShape(global, where)
	if err != nil {
		return nil, err
	}
	starts := make([]*hlo.Instruction, global.Rank())
	for k := range starts {
		starts[k] = p.offset(to, k, local.Dims[k])
	}
	return p.b.DynamicSlice(x, starts, local.Dims), nil
}

// offset is this device's first index along dimension k of layout l's tiles of
// size size: a table of every device's offset, indexed by partition-id (zero
// where the dimension is whole).
func (p *partitioner) offset(l *layout, k int, size int64) *hlo.Instruction {
	if l.tiles[k] == 1 {
		return p.s32(0)
	}
	table := hlo.NewLiteral(hlo.MakeShape(hlo.S32, int64(p.n)))
	key := ""
	for d, c := range l.coord {
		table.SetInt64(d, c[k]*size)
		key += fmt.Sprint(c[k]*size, ",")
	}
	if o, ok := p.offsets[key]; ok {
		return o
	}
	o := p.b.Reshape(p.b.DynamicSlice(p.b.Constant(table), []*hlo.Instruction{p.partition()}, []int64{1}))
	p.offsets[key] = o
	return o
}

// partition is partition-id as s32, added once.
func (p *partitioner) partition() *hlo.Instruction {
	if p.pid == nil {
		p.pid = p.b.Convert(p.b.PartitionID(), hlo.S32)
	}
	return p.pid
}

func (p *partitioner) s32(v int64) *hlo.Instruction {
	if p.zero == nil {
		p.zero = p.b.ScalarConstant(hlo.S32, 0)
	}
	if v == 0 {
		return p.zero
	}
	return p.b.ScalarConstant(hlo.S32, float64(v))
}
