package shaders

import (
	"fmt"
	"math"
)

// StridedCopy describes a copy of 32-bit elements: for every index i below Shape,
//
//	dst[DstOffset + Σ i[d]·DstStride[d]] = src[SrcOffset + Σ i[d]·SrcStride[d]]
//
// Offsets and strides count elements of the bound ranges. Strides may be negative or
// zero in the source (a broadcast); distinct elements must not write the same
// destination element, and source and destination must not overlap. Any rank works
// whose canonical form (size-1 dimensions dropped, dimensions contiguous in both
// source and destination merged) has rank 4 or less.
type StridedCopy struct {
	Shape     []int
	SrcStride []int
	DstStride []int
	SrcOffset int
	DstOffset int
}

// copyDim is one dimension of a canonical copy.
type copyDim struct{ n, src, dst int }

// canonical drops size-1 dimensions and merges neighbours that are contiguous in both
// source and destination, outermost first. ok is false when some extent is 0.
func (c StridedCopy) canonical() (dims []copyDim, ok bool) {
	for d, n := range c.Shape {
		if n == 0 {
			return nil, false
		}
		if n == 1 {
			continue
		}
		cur := copyDim{n, c.SrcStride[d], c.DstStride[d]}
		if k := len(dims) - 1; k >= 0 && dims[k].src == cur.src*cur.n && dims[k].dst == cur.dst*cur.n {
			dims[k] = copyDim{dims[k].n * cur.n, cur.src, cur.dst}
			continue
		}
		dims = append(dims, cur)
	}
	return dims, true
}

// span returns the least and greatest element index a strided access reaches.
func span(offset int, dims []copyDim, stride func(copyDim) int) (lo, hi int) {
	lo, hi = offset, offset
	for _, d := range dims {
		step := (d.n - 1) * stride(d)
		if step < 0 {
			lo += step
		} else {
			hi += step
		}
	}
	return lo, hi
}

// CopyDispatch plans c for the Copy shader. Push constants (56 bytes): uvec4 shape,
// ivec4 srcStride, ivec4 dstStride, uint srcOffset, uint dstOffset, with shape.w the
// innermost extent.
//
// The copy is canonicalised first. If the innermost extent is below the workgroup
// width (64) and a longer dimension exists, that dimension moves innermost: the shader
// spreads the innermost extent over the invocations of a workgroup, and an element
// copy does not depend on the order of the others.
func CopyDispatch(c StridedCopy) (Dispatch, error) {
	if len(c.SrcStride) != len(c.Shape) || len(c.DstStride) != len(c.Shape) {
		return Dispatch{}, fmt.Errorf("shaders: copy: shape has rank %d, strides %d and %d",
			len(c.Shape), len(c.SrcStride), len(c.DstStride))
	}
	total := 1
	for _, n := range c.Shape {
		if n < 0 {
			return Dispatch{}, fmt.Errorf("shaders: copy: negative extent in shape %v", c.Shape)
		}
		total *= n
		if total > math.MaxUint32 {
			return Dispatch{}, fmt.Errorf("shaders: copy: shape %v has 2^32 elements or more", c.Shape)
		}
	}
	dims, ok := c.canonical()
	if !ok {
		// Nothing to copy: a zero extent keeps every loop of the shader empty.
		return Dispatch{Push: copyPush([4]uint32{}, [4]int32{}, [4]int32{}, 0, 0), Groups: [3]uint32{1, 1, 1}}, nil
	}
	if len(dims) > 4 {
		return Dispatch{}, fmt.Errorf("shaders: copy: shape %v with strides %v, %v has rank %d after merging contiguous dimensions; the shader takes 4",
			c.Shape, c.SrcStride, c.DstStride, len(dims))
	}
	for _, side := range []struct {
		what   string
		offset int
		stride func(copyDim) int
	}{
		{"source", c.SrcOffset, func(d copyDim) int { return d.src }},
		{"destination", c.DstOffset, func(d copyDim) int { return d.dst }},
	} {
		// The shader computes indices in int32.
		if lo, hi := span(side.offset, dims, side.stride); lo < 0 || hi > math.MaxInt32 {
			return Dispatch{}, fmt.Errorf("shaders: copy: %s indices span [%d, %d], outside [0, 2^31)", side.what, lo, hi)
		}
	}
	if last := len(dims) - 1; last >= 0 && dims[last].n < 64 {
		longest := last
		for i, d := range dims {
			if d.n > dims[longest].n {
				longest = i
			}
		}
		dims[last], dims[longest] = dims[longest], dims[last]
	}
	// Pad to rank 4 with leading size-1 dimensions.
	var shape [4]uint32
	var src, dst [4]int32
	for i := range shape {
		shape[i] = 1
	}
	for i, d := range dims {
		j := 4 - len(dims) + i
		shape[j], src[j], dst[j] = uint32(d.n), int32(d.src), int32(d.dst)
	}
	g, err := copyGroups(shape)
	if err != nil {
		return Dispatch{}, err
	}
	return Dispatch{
		Push:   copyPush(shape, src, dst, uint32(c.SrcOffset), uint32(c.DstOffset)),
		Groups: g,
	}, nil
}

// copyGroups chooses workgroup counts for a padded rank-4 shape: x runs over shape[3]
// (64 invocations per workgroup), y over shape[2], z over shape[0]·shape[1]. It relies
// on CopyDispatch's arrangement (an innermost extent below 64 is the longest), which
// bounds the outer loops for any copy of fewer than 2^32 elements. Normally
// the product stays within streamGroups and the grid-stride loops do the rest; if that
// would take an invocation past lavapipe's loop limit, every axis gets as many
// workgroups as it can use.
func copyGroups(shape [4]uint32) ([3]uint32, error) {
	w, z, rows := int(shape[3]), int(shape[2]), int(shape[0])*int(shape[1])
	iterations := func(g [3]uint32) int {
		return nestedIterations(ceilDiv(rows, int(g[2])), ceilDiv(z, int(g[1])), ceilDiv(w, 64*int(g[0])))
	}
	gx := groups(w, 64, streamGroups)
	gy := groups(z, 1, min(MaxGroups, max(1, streamGroups/int(gx))))
	gz := groups(rows, 1, min(MaxGroups, max(1, streamGroups/int(gx*gy))))
	g := [3]uint32{gx, gy, gz}
	if iterations(g) <= maxLoopIterations {
		return g, nil
	}
	g = [3]uint32{groups(w, 64, MaxGroups), groups(z, 1, MaxGroups), groups(rows, 1, MaxGroups)}
	if it := iterations(g); it > maxLoopIterations {
		return g, fmt.Errorf("shaders: copy of shape %v needs %d loop iterations per invocation, above the %d lavapipe allows",
			shape, it, maxLoopIterations)
	}
	return g, nil
}

func copyPush(shape [4]uint32, src, dst [4]int32, srcOff, dstOff uint32) []byte {
	v := make([]uint32, 0, 14)
	v = append(v, shape[:]...)
	for _, s := range src {
		v = append(v, uint32(s))
	}
	for _, s := range dst {
		v = append(v, uint32(s))
	}
	return words(append(v, srcOff, dstOff)...)
}
