package vkxla_test

import "testing"

// TestMergedDotGEMM runs dots whose lhs has several free dims or whose sides
// contract over several dims — a dense layer over [batch, seq, features], its
// input and weight gradients, as JAX and PyTorch/XLA dump them — which codegen
// now lowers to the GEMM kernel (merged into one M and one K: gemmView; its own
// test checks the strategy), against cpuref, fused (with an epilogue: one kernel)
// and unfused. A contraction whose dims are not adjacent keeps the elemental dot.
func TestMergedDotGEMM(t *testing.T) {
	runTextCases(t, []dumpCase{{"dense layer [2,64,96]·[96,80]", `HloModule dense
ENTRY main {
  x = f32[2,64,96]{2,1,0} parameter(0)
  w = f32[96,80]{1,0} parameter(1)
  ROOT y = f32[2,64,80]{2,1,0} dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}`, 1},
		{"dense layer + bias + tanh (epilogue)", `HloModule dense_epilogue
ENTRY main {
  x = f32[2,3,40,64]{3,2,1,0} parameter(0)
  w = f32[64,36]{1,0} parameter(1)
  b = f32[36]{0} parameter(2)
  d = f32[2,3,40,36]{3,2,1,0} dot(x, w), lhs_contracting_dims={3}, rhs_contracting_dims={0}
  bb = f32[2,3,40,36]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[2,3,40,36]{3,2,1,0} add(d, bb)
  ROOT t = f32[2,3,40,36]{3,2,1,0} tanh(a)
}`, 1},
		{"input gradient [2,64,80]·[96,80]ᵀ", `HloModule input_grad
ENTRY main {
  dy = f32[2,64,80]{2,1,0} parameter(0)
  w = f32[96,80]{1,0} parameter(1)
  ROOT dx = f32[2,64,96]{2,1,0} dot(dy, w), lhs_contracting_dims={2}, rhs_contracting_dims={1}
}`, 1},
		{"weight gradient, contracting batch and seq", `HloModule weight_grad
ENTRY main {
  x = f32[2,64,96]{2,1,0} parameter(0)
  dy = f32[2,64,80]{2,1,0} parameter(1)
  ROOT dw = f32[96,80]{1,0} dot(x, dy), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
}`, 1},
		{"batched attention scores with merged rows", `HloModule scores
ENTRY main {
  q = f32[4,2,16,64]{3,2,1,0} parameter(0)
  k = f32[4,64,24]{2,1,0} parameter(1)
  ROOT s = f32[4,2,16,24]{3,2,1,0} dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}`, 1},
		{"bf16 dense layer", `HloModule dense_bf16
ENTRY main {
  x = bf16[4,32,64]{2,1,0} parameter(0)
  w = bf16[64,48]{1,0} parameter(1)
  ROOT y = bf16[4,32,48]{2,1,0} dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}`, 1},
		{"contracting dims not adjacent (elemental)", `HloModule apart
ENTRY main {
  x = f32[8,40,6]{2,1,0} parameter(0)
  y = f32[8,6,36]{2,1,0} parameter(1)
  ROOT z = f32[40,36]{1,0} dot(x, y), lhs_contracting_dims={0,2}, rhs_contracting_dims={0,1}
}`, 1},
	})
}
