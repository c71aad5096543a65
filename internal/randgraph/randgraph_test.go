package randgraph

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// TestDecodersBuildValidModules: every byte string decodes to a module that
// verifies, for both decoders, and across random inputs FromBytes reaches every op
// kind its table names (control flow included) and Exact its 14.
func TestDecodersBuildValidModules(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pipeline, exact := map[hlo.Opcode]bool{}, map[hlo.Opcode]bool{}
	for i := 0; i < 1500; i++ {
		data := make([]byte, rng.IntN(160))
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		m, _, err := FromBytes(data)
		if err != nil {
			t.Fatalf("FromBytes(%v): %v", data, err)
		}
		verifyAndCount(t, m, pipeline)
		s := hlo.MakeShape(hlo.F32, int64(1+rng.IntN(9)), int64(1+rng.IntN(9)))
		for _, build := range []func([]byte, hlo.Shape) (*hlo.Module, error){Exact, ExactLoop} {
			m, err := build(data[:min(len(data), 40)], s)
			if err != nil {
				t.Fatalf("Exact(%v, %v): %v", data, s, err)
			}
			verifyAndCount(t, m, exact)
		}
	}
	for _, op := range []hlo.Opcode{hlo.OpDot, hlo.OpReduce, hlo.OpWhile, hlo.OpConditional, hlo.OpCall, hlo.OpDynamicSlice,
		hlo.OpDynamicUpdateSlice, hlo.OpSelect, hlo.OpPad, hlo.OpConcatenate, hlo.OpReverse, hlo.OpTranspose, hlo.OpConvert, hlo.OpClamp} {
		if !pipeline[op] {
			t.Errorf("FromBytes never made %s", op)
		}
	}
	for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpMultiply, hlo.OpMaximum, hlo.OpNegate, hlo.OpSelect, hlo.OpAbs, hlo.OpReverse,
		hlo.OpTranspose, hlo.OpReshape, hlo.OpPad, hlo.OpReduce, hlo.OpConcatenate, hlo.OpSlice, hlo.OpConvert, hlo.OpClamp, hlo.OpWhile} {
		if !exact[op] {
			t.Errorf("Exact never made %s", op)
		}
	}
}

func verifyAndCount(t *testing.T, m *hlo.Module, seen map[hlo.Opcode]bool) {
	t.Helper()
	if err := hlo.Verify(m); err != nil {
		t.Fatalf("%v\n%s", err, hlo.Print(m))
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			seen[in.Op] = true
		}
	}
}
