package hlo

import (
	"fmt"
	"slices"
	"strings"
)

// ShardingKind is the form of an XLA sharding that vkxla keeps on an instruction.
type ShardingKind uint8

// The kinds kept. XLA's manual, unknown and unreduced shardings, last_tile_dims
// lists and the named mesh forms are read and dropped (Instruction.Sharding stays
// nil: the value is unannotated).
const (
	// ShardReplicated: every device holds the whole value.
	ShardReplicated ShardingKind = iota
	// ShardMaximal: one device (Device) holds the whole value.
	ShardMaximal
	// ShardTiled: the value is split into tiles, TileDims[k] along dimension k;
	// Devices lists the device of each tile, row-major over TileDims. With
	// ReplicateLast the last entry of TileDims is not a dimension of the value but
	// how many devices hold each tile (XLA's last_tile_dim_replicate).
	ShardTiled
	// ShardTuple: one sharding per element of a tuple (Elems).
	ShardTuple
)

// Sharding is an XLA sharding annotation (HloSharding): how an SPMD program's
// value is laid out over the devices of its partitions. The spmd package
// partitions a program by them; nothing else reads them.
type Sharding struct {
	Kind ShardingKind
	// Device is a maximal sharding's device.
	Device int64
	// TileDims and Devices are a tiled sharding's tile assignment; Devices is
	// expanded from the iota form, which IotaDims/IotaPerm keep for printing.
	TileDims      []int64
	Devices       []int64
	IotaDims      []int64
	IotaPerm      []int64
	ReplicateLast bool
	// Elems are a tuple sharding's element shardings.
	Elems []*Sharding
}

// Replicated is the sharding {replicated}.
func Replicated() *Sharding { return &Sharding{Kind: ShardReplicated} }

// Maximal is the sharding {maximal device=d}.
func Maximal(d int64) *Sharding { return &Sharding{Kind: ShardMaximal, Device: d} }

// Tiled is the sharding {devices=[tiles]devices…}: tiles[k] tiles along
// dimension k, tile i (row-major over tiles) on devices[i]. Nil devices is the
// iota order 0, 1, ….
func Tiled(tiles []int64, devices []int64) *Sharding {
	s := &Sharding{Kind: ShardTiled, TileDims: slices.Clone(tiles)}
	n := product(tiles)
	if devices == nil {
		s.IotaDims = []int64{n}
		s.Devices = Iota64(int(n))
	} else {
		s.Devices = slices.Clone(devices)
	}
	return s
}

// PartiallyTiled is Tiled with its last tile dimension a replication count
// (last_tile_dim_replicate): tiles has one entry more than the value has
// dimensions.
func PartiallyTiled(tiles []int64, devices []int64) *Sharding {
	s := Tiled(tiles, devices)
	s.ReplicateLast = true
	return s
}

// TupleSharding is a tuple's sharding, one element sharding each.
func TupleSharding(elems ...*Sharding) *Sharding {
	return &Sharding{Kind: ShardTuple, Elems: elems}
}

func product(xs []int64) int64 {
	n := int64(1)
	for _, x := range xs {
		n *= x
	}
	return n
}

// IsReplicated reports whether every device holds the whole value: replicated,
// or tiled with one tile.
func (s *Sharding) IsReplicated() bool {
	if s == nil {
		return false
	}
	switch s.Kind {
	case ShardReplicated:
		return true
	case ShardTiled:
		return len(s.ValueTiles()) == 0 || product(s.ValueTiles()) == 1
	}
	return false
}

// ValueTiles is a tiled sharding's tile counts along the value's dimensions (its
// TileDims without the replication count).
func (s *Sharding) ValueTiles() []int64 {
	if s.ReplicateLast {
		return s.TileDims[:len(s.TileDims)-1]
	}
	return s.TileDims
}

// Clone returns a deep copy (nil for nil).
func (s *Sharding) Clone() *Sharding {
	if s == nil {
		return nil
	}
	c := *s
	c.TileDims, c.Devices = slices.Clone(s.TileDims), slices.Clone(s.Devices)
	c.IotaDims, c.IotaPerm = slices.Clone(s.IotaDims), slices.Clone(s.IotaPerm)
	if s.Elems != nil {
		c.Elems = make([]*Sharding, len(s.Elems))
		for i, e := range s.Elems {
			c.Elems[i] = e.Clone()
		}
	}
	return &c
}

// Equal reports whether two shardings place every element on the same devices
// as written (the list and iota forms of one assignment are equal).
func (s *Sharding) Equal(o *Sharding) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.Kind != o.Kind {
		return false
	}
	switch s.Kind {
	case ShardMaximal:
		return s.Device == o.Device
	case ShardTiled:
		return slices.Equal(s.TileDims, o.TileDims) && slices.Equal(s.Devices, o.Devices) && s.ReplicateLast == o.ReplicateLast
	case ShardTuple:
		return slices.EqualFunc(s.Elems, o.Elems, (*Sharding).Equal)
	}
	return true
}

// String prints the sharding as XLA writes it: {replicated}, {maximal device=1},
// {devices=[2,1]0,1}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate},
// {{replicated}, {devices=[2]<=[2]}}.
func (s *Sharding) String() string {
	if s == nil {
		return "{}"
	}
	switch s.Kind {
	case ShardReplicated:
		return "{replicated}"
	case ShardMaximal:
		return fmt.Sprintf("{maximal device=%d}", s.Device)
	case ShardTuple:
		parts := make([]string, len(s.Elems))
		for i, e := range s.Elems {
			parts[i] = e.String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	text := "{devices=[" + joinInts(s.TileDims, ",") + "]"
	if s.IotaDims != nil {
		text += "<=[" + joinInts(s.IotaDims, ",") + "]"
		if !slices.Equal(s.IotaPerm, Iota64(len(s.IotaDims))) && s.IotaPerm != nil {
			text += "T(" + joinInts(s.IotaPerm, ",") + ")"
		}
	} else {
		text += joinInts(s.Devices, ",")
	}
	if s.ReplicateLast {
		text += " last_tile_dim_replicate"
	}
	return text + "}"
}

// Validate checks the sharding against the shape of the value it annotates: a
// tuple sharding has one element per tuple element, a tiled one a tile count per
// dimension (plus the replication count) and as many distinct devices as tiles.
func (s *Sharding) Validate(shape Shape) error {
	switch s.Kind {
	case ShardTuple:
		if !shape.IsTuple() || len(s.Elems) != len(shape.Elems) {
			return fmt.Errorf("tuple sharding of %d elements on %v", len(s.Elems), shape)
		}
		for i, e := range s.Elems {
			if err := e.Validate(shape.Elems[i]); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case ShardTiled:
		if shape.IsTuple() {
			return fmt.Errorf("tiled sharding %v on the tuple %v", s, shape)
		}
		if len(s.ValueTiles()) != shape.Rank() {
			return fmt.Errorf("sharding %v tiles %d dimensions of the rank-%d %v", s, len(s.ValueTiles()), shape.Rank(), shape)
		}
		if int64(len(s.Devices)) != product(s.TileDims) {
			return fmt.Errorf("sharding %v lists %d devices for %d tiles", s, len(s.Devices), product(s.TileDims))
		}
		seen := map[int64]bool{}
		for _, d := range s.Devices {
			if d < 0 || seen[d] {
				return fmt.Errorf("sharding %v lists device %d twice or negative", s, d)
			}
			seen[d] = true
		}
	}
	return nil
}

// SetSharding annotates in with s (nil removes the annotation), for the spmd
// partitioner; it returns in.
func (b *Builder) SetSharding(in *Instruction, s *Sharding) *Instruction {
	if in == nil || b.err != nil {
		return in
	}
	if s != nil {
		if err := s.Validate(in.Shape); err != nil {
			b.err = fmt.Errorf("SetSharding of %s: %w", in.Name, err)
			return in
		}
	}
	in.Sharding = s.Clone()
	return in
}
