package spmd

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// layout is how an array value lies over the n devices of the partitioned
// program: tiles[k] tiles along dimension k, and device d holds the tile at
// coord[d] (a tile index per dimension). A tile may be held by several devices
// (partial replication); a valid layout gives every tile to the same number of
// devices. It is an hlo.Sharding reduced to what the partitioner needs: which
// tile each device holds, whatever order the tile assignment lists them in.
type layout struct {
	tiles []int64
	coord [][]int64
}

// replicated is the layout of a value every device holds whole.
func replicated(rank, n int) *layout {
	l := &layout{tiles: ones(rank), coord: make([][]int64, n)}
	for d := range l.coord {
		l.coord[d] = make([]int64, rank)
	}
	return l
}

func ones(n int) []int64 {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = 1
	}
	return xs
}

// fromSharding reads an array value's annotation; nil and maximal shardings are
// replicated (a maximal value computed on every device holds the same values).
func fromSharding(s *hlo.Sharding, shape hlo.Shape, n int, where string) (*layout, error) {
	rank := shape.Rank()
	if s == nil || s.Kind == hlo.ShardReplicated || s.Kind == hlo.ShardMaximal {
		return replicated(rank, n), nil
	}
	if s.Kind != hlo.ShardTiled {
		return nil, fmt.Errorf("spmd: %s: sharding %v on the array %v: %w", where, s, shape, vkxla.ErrInvalidArgument)
	}
	if err := s.Validate(shape); err != nil {
		return nil, fmt.Errorf("spmd: %s: %v: %w", where, err, vkxla.ErrInvalidArgument)
	}
	if len(s.Devices) != n || slices.Max(s.Devices) >= int64(n) {
		return nil, fmt.Errorf("spmd: %s: sharding %v does not place its tiles on the %d devices 0…%d: %w",
			where, s, n, n-1, vkxla.ErrInvalidArgument)
	}
	l := &layout{tiles: slices.Clone(s.ValueTiles()), coord: make([][]int64, n)}
	for i, d := range s.Devices {
		l.coord[d] = unflatten(int64(i), s.TileDims)[:rank]
	}
	return l, nil
}

// unflatten is the row-major index of element i of an array of dims.
func unflatten(i int64, dims []int64) []int64 {
	idx := make([]int64, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		idx[k] = i % dims[k]
		i /= dims[k]
	}
	return idx
}

// sharding writes the layout back as an hlo.Sharding (devices of one tile
// listed in device order along the replication dimension).
func (l *layout) sharding() *hlo.Sharding {
	if l.isReplicated() {
		return hlo.Replicated()
	}
	perTile := int64(len(l.coord)) / product(l.tiles)
	tiles := slices.Clone(l.tiles)
	devices := make([]int64, len(l.coord))
	filled := map[int64]int64{}
	for d, c := range l.coord {
		t := flatten(c, l.tiles)
		devices[t*perTile+filled[t]] = int64(d)
		filled[t]++
	}
	if perTile > 1 {
		return hlo.PartiallyTiled(append(tiles, perTile), devices)
	}
	return hlo.Tiled(tiles, devices)
}

func flatten(idx, dims []int64) int64 {
	i := int64(0)
	for k, x := range idx {
		i = i*dims[k] + x
	}
	return i
}

func product(xs []int64) int64 {
	n := int64(1)
	for _, x := range xs {
		n *= x
	}
	return n
}

func (l *layout) isReplicated() bool { return product(l.tiles) == 1 }

// tiled lists the dimensions split into more than one tile.
func (l *layout) tiled() []int {
	var ks []int
	for k, t := range l.tiles {
		if t > 1 {
			ks = append(ks, k)
		}
	}
	return ks
}

// equal reports whether both layouts give every device the same tile.
func (l *layout) equal(o *layout) bool {
	return slices.Equal(l.tiles, o.tiles) && slices.EqualFunc(l.coord, o.coord, slices.Equal[[]int64])
}

// valid reports whether every tile is held by the same number of devices (and
// so by at least one).
func (l *layout) valid() bool {
	n := int64(len(l.coord))
	tiles := product(l.tiles)
	if n%tiles != 0 {
		return false
	}
	count := map[int64]int64{}
	for _, c := range l.coord {
		count[flatten(c, l.tiles)]++
	}
	if int64(len(count)) != tiles {
		return false
	}
	for _, c := range count {
		if c != n/tiles {
			return false
		}
	}
	return true
}

// localShape is the shape of one device's tile; a dimension its tile count does
// not divide is an error naming the instruction.
func (l *layout) localShape(s hlo.Shape, where string) (hlo.Shape, error) {
	local := s.Clone()
	for k, t := range l.tiles {
		if s.Dims[k]%t != 0 {
			return hlo.Shape{}, fmt.Errorf("spmd: %s: dimension %d of %v (size %d) is not divisible into %d tiles: %w",
				where, k, s, s.Dims[k], t, vkxla.ErrInvalidArgument)
		}
		local.Dims[k] = s.Dims[k] / t
	}
	return local, nil
}

// groups are the device groups of a collective over the dimensions varying:
// each group holds one device per combination of tile indices along them, all
// its members holding the same tiles along the other dimensions; members are
// listed in row-major order of their tile indices along varying (the order
// all-gather concatenates in). Devices holding the same tile are told apart by
// their rank among them, so a valid layout's groups partition the devices.
func (l *layout) groups(varying []int) [][]int64 {
	type key struct{ fixed, rank string }
	rankOf := map[string]int{}
	byKey := map[key][]int64{}
	var keys []key
	for d, c := range l.coord {
		full := fmt.Sprint(c)
		fixed := slices.Clone(c)
		for _, k := range varying {
			fixed[k] = -1
		}
		k := key{fmt.Sprint(fixed), fmt.Sprint(rankOf[full])}
		rankOf[full]++
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], int64(d))
	}
	out := make([][]int64, len(keys))
	for i, k := range keys {
		g := byKey[k]
		slices.SortStableFunc(g, func(a, b int64) int {
			return int(l.along(a, varying) - l.along(b, varying))
		})
		out[i] = g
	}
	return out
}

// along is device d's tile index along dims, row-major.
func (l *layout) along(d int64, dims []int) int64 {
	i := int64(0)
	for _, k := range dims {
		i = i*l.tiles[k] + l.coord[d][k]
	}
	return i
}

// with returns the layout whose device d holds the tile coord(d) of tiles.
func with(tiles []int64, n int, coord func(d int) []int64) *layout {
	l := &layout{tiles: tiles, coord: make([][]int64, n)}
	for d := range l.coord {
		l.coord[d] = coord(d)
	}
	return l
}

// untile returns the layout with the dimensions dims held whole.
func (l *layout) untile(dims ...int) *layout {
	tiles := slices.Clone(l.tiles)
	for _, k := range dims {
		tiles[k] = 1
	}
	return with(tiles, len(l.coord), func(d int) []int64 {
		c := slices.Clone(l.coord[d])
		for _, k := range dims {
			c[k] = 0
		}
		return c
	})
}
