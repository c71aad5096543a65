package codegen_test

import (
	"encoding/binary"
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// TestPhiloxOneBlockPerGroup: rng-bit-generator's Philox bits, after the passes,
// are one fused kernel of four elements per invocation, and it computes each
// block's ten rounds (two u64 products each) once per invocation: 20 products for
// u32 bits (a block's four words are the group's four elements) and 40 for u64
// (two blocks of two words). Computed per element, every lane repeated them, in
// every branch of the concatenation that interleaves the words: 296 and 152
// products before. (TestDifferentialOps checks the bits against cpuref.)
func TestPhiloxOneBlockPerGroup(t *testing.T) {
	for _, tc := range []struct {
		bits     hlo.Shape
		products int
	}{{hlo.MakeShape(hlo.U32, 1024), 20}, {hlo.MakeShape(hlo.U64, 8, 64), 40}} {
		b := hlo.NewBuilder("philox")
		st := b.Parameter(hlo.MakeShape(hlo.U64, 3), "state")
		m, err := b.Build(b.GetTupleElement(b.RngBitGenerator(st, hlo.RngPhilox, tc.bits), 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := passes.Run(m, passes.Config{}); err != nil {
			t.Fatal(err)
		}
		root := m.Entry.Root
		if root.Op != hlo.OpFusion {
			t.Fatalf("%v: root %v, want one fusion", tc.bits, root.Op)
		}
		p, err := codegen.Lower(root.Called[0], codegen.LavapipeTarget())
		if err != nil {
			t.Fatal(err)
		}
		codegen.ValidateProgram(t, p)
		if len(p.Dispatches) != 1 {
			t.Fatalf("%v: %d dispatches, want 1", tc.bits, len(p.Dispatches))
		}
		if got := u64Products(p.Dispatches[0].Kernel.SPIRV); got != tc.products {
			t.Errorf("%v: %d u64 products in the kernel, want %d", tc.bits, got, tc.products)
		}
	}
}

// u64Products counts the OpIMul instructions of unsigned 64-bit result in a
// SPIR-V module.
func u64Products(spv []byte) int {
	const opTypeInt, opIMul = 21, 132
	words := make([]uint32, len(spv)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(spv[4*i:])
	}
	u64 := map[uint32]bool{}
	n := 0
	for i := 5; i < len(words); {
		count, op := int(words[i]>>16), words[i]&0xFFFF
		switch {
		case op == opTypeInt && words[i+2] == 64 && words[i+3] == 0:
			u64[words[i+1]] = true
		case op == opIMul && u64[words[i+1]]:
			n++
		}
		i += max(count, 1)
	}
	return n
}
