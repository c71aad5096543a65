package arena

import (
	"cmp"
	"slices"
)

// extent is a free byte range of one block.
type extent struct {
	size  int64
	block int
	off   int64
}

// blockOff names a position in the arena: a block and an offset in it.
type blockOff struct {
	block int
	off   int64
}

// freeList holds the free extents twice: sorted by (size, block, offset) for
// best-fit search, and keyed by both ends for O(1) coalescing on free. Every free
// extent is maximal: no two free extents of a block touch.
//
// The sorted slice costs O(n) per insert, which is cheap for the tens to hundreds of
// free extents a runtime arena holds, and keeps ties deterministic (lowest block,
// then lowest offset), so the same program always gets the same addresses.
type freeList struct {
	bySize  []extent
	byStart map[blockOff]int64 // start → size
	byEnd   map[blockOff]int64 // end → start
}

func newFreeList() freeList {
	return freeList{byStart: map[blockOff]int64{}, byEnd: map[blockOff]int64{}}
}

func cmpExtent(a, b extent) int {
	if c := cmp.Compare(a.size, b.size); c != 0 {
		return c
	}
	if c := cmp.Compare(a.block, b.block); c != 0 {
		return c
	}
	return cmp.Compare(a.off, b.off)
}

func (f *freeList) insert(e extent) {
	i, _ := slices.BinarySearchFunc(f.bySize, e, cmpExtent)
	f.bySize = slices.Insert(f.bySize, i, e)
	f.byStart[blockOff{e.block, e.off}] = e.size
	f.byEnd[blockOff{e.block, e.off + e.size}] = e.off
}

func (f *freeList) remove(e extent) {
	i, found := slices.BinarySearchFunc(f.bySize, e, cmpExtent)
	if !found {
		panic("arena: free list out of sync") // an internal bug, never a caller's
	}
	f.bySize = slices.Delete(f.bySize, i, i+1)
	delete(f.byStart, blockOff{e.block, e.off})
	delete(f.byEnd, blockOff{e.block, e.off + e.size})
}

// bestFit returns the smallest free extent of at least need bytes.
func (f *freeList) bestFit(need int64) (extent, bool) {
	i, _ := slices.BinarySearchFunc(f.bySize, extent{size: need, block: -1}, cmpExtent)
	if i == len(f.bySize) {
		return extent{}, false
	}
	return f.bySize[i], true
}

// add returns e to the list, merged with the free extents just before and after it.
func (f *freeList) add(e extent) {
	if start, ok := f.byEnd[blockOff{e.block, e.off}]; ok {
		left := extent{size: e.off - start, block: e.block, off: start}
		f.remove(left)
		e.off, e.size = start, e.size+left.size
	}
	if size, ok := f.byStart[blockOff{e.block, e.off + e.size}]; ok {
		f.remove(extent{size: size, block: e.block, off: e.off + e.size})
		e.size += size
	}
	f.insert(e)
}

// largest is the size of the biggest free extent, 0 when none.
func (f *freeList) largest() int64 {
	if len(f.bySize) == 0 {
		return 0
	}
	return f.bySize[len(f.bySize)-1].size
}
