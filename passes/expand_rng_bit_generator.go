package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandRngBitGenerator lowers rng-bit-generator to HLO integer ops (u32 add, xor,
// shifts; u32×u32 multiplies through u64 for Philox's high words), so that code
// generation needs nothing of its own. It draws exactly cpuref's bits: Philox4x32-10
// or Threefry2x32-20 in XLA's state layout and element order (docs/cpuref.md);
// rng_default is Philox.
func ExpandRngBitGenerator(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpRngBitGenerator), hlo.Decompose)
}
