package alloc

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkHeapAllocFree measures one Alloc and one Free against a heap holding
// `live` allocations of mixed sizes, freed in random order: the runtime's pattern
// for temporaries. ns/op is per Alloc+Free pair.
func BenchmarkHeapAllocFree(b *testing.B) {
	for _, live := range []int{16, 256, 4096} {
		b.Run(strconv.Itoa(live)+"live", func(b *testing.B) { benchAllocFree(b, live) })
	}
}

func benchAllocFree(b *testing.B, live int) {
	l := Limits{Alignment: 16, MaxBindingRange: 128 << 20, MaxBlockSize: 2 << 30}
	h, err := NewHeap(l, HeapOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	size := func() int64 { return 16 << rng.IntN(14) } // 16 B .. 128 KiB
	held := make([]Chunk, live)
	for i := range held {
		if held[i], err = h.Alloc(size()); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		i := rng.IntN(live)
		if err := h.Free(held[i]); err != nil {
			b.Fatal(err)
		}
		if held[i], err = h.Alloc(size()); err != nil {
			b.Fatal(err)
		}
	}
}
