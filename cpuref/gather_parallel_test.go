package cpuref

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestGatherRowsOnEveryCore: a gather of 4096 rows of 16 bytes, whose result is
// filled on every core, reads each row the index names, every time: the index
// readers of the workers used to share one scratch index, so that a worker now
// and then read the row another one was looking up (a few wrong bytes in a
// run, found as a flaky TestBigGather). Checked against the definition, row by
// row, 20 times; -race reports the old code at once.
func TestGatherRowsOnEveryCore(t *testing.T) {
	const rows, n = 1 << 15, 4096
	m := parse(t, `HloModule g
ENTRY e {
  table = u8[32768,16] parameter(0)
  idx = s32[4096,1] parameter(1)
  ROOT g = u8[4096,16] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
}`)
	r := rand.New(rand.NewPCG(17, 4))
	tb := make([]uint8, rows*16)
	for i := range tb {
		tb[i] = uint8(r.Uint32())
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(r.IntN(rows))
	}
	table, index := hlo.MustFromSlice([]int64{rows, 16}, tb), hlo.MustFromSlice([]int64{n, 1}, idx)
	for rep := range 20 {
		got, err := Eval(m, table, index)
		require.NoError(t, err)
		g := got.Bytes()
		for i, row := range idx {
			require.Equal(t, tb[int(row)*16:int(row)*16+16], g[i*16:i*16+16], "run %d, row %d of the result (table row %d)", rep, i, row)
		}
	}
}
