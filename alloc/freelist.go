package alloc

import (
	"cmp"
	"slices"
)

// node is one extent of a block, live or free. Each block's nodes form a list in
// address order that tiles the block, so freeing finds its neighbours through
// prev and next without any lookup.
type node struct {
	block      int
	off, size  int64 // size counts the alignment rounding
	prev, next *node
	id         uint64 // the live allocation's id; 0 when free
}

func (n *node) free() bool { return n.id == 0 }

// blockOff names a position in the arena, a block and an offset in it, packed in
// one word so that index entries compare with two integer comparisons.
type blockOff uint64

// maxBlockBits bounds offsets (1 TiB; no device allocates more at once) and so the
// block index to 2^24.
const maxBlockBits = 40

func at(block int, off int64) blockOff { return blockOff(uint64(block)<<maxBlockBits | uint64(off)) }

// freeList indexes the free nodes by (size, block, offset) for best-fit search.
// Every free node is maximal: no two free nodes of a block are neighbours.
//
// The sorted slice costs O(n) per insert, which is cheap for the tens to hundreds of
// free extents a runtime arena holds, and keeps ties deterministic (lowest block,
// then lowest offset), so the same program always gets the same addresses.
type freeList struct {
	bySize []entry
}

type entry struct {
	size int64
	pos  blockOff
	n    *node
}

func cmpEntry(a, b entry) int {
	if c := cmp.Compare(a.size, b.size); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

func entryOf(n *node) entry { return entry{size: n.size, pos: at(n.block, n.off), n: n} }

func (f *freeList) insert(n *node) {
	e := entryOf(n)
	i, _ := slices.BinarySearchFunc(f.bySize, e, cmpEntry)
	f.bySize = slices.Insert(f.bySize, i, e)
}

func (f *freeList) remove(n *node) {
	i, found := slices.BinarySearchFunc(f.bySize, entryOf(n), cmpEntry)
	if !found || f.bySize[i].n != n {
		panic("arena: free list out of sync") // an internal bug, never a caller's
	}
	f.bySize = slices.Delete(f.bySize, i, i+1)
}

// bestFit returns the smallest free node of at least need bytes, or nil.
func (f *freeList) bestFit(need int64) *node {
	i, _ := slices.BinarySearchFunc(f.bySize, entry{size: need}, cmpEntry)
	if i == len(f.bySize) {
		return nil
	}
	return f.bySize[i].n
}

// largest is the size of the biggest free node, 0 when none.
func (f *freeList) largest() int64 {
	if len(f.bySize) == 0 {
		return 0
	}
	return f.bySize[len(f.bySize)-1].size
}
