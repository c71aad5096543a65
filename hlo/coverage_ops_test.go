package hlo

// Samples of map, mulhi, topk, triangular-solve and cholesky, the texts as XLA and
// JAX dump them.
func init() {
	opSamples[OpMap] = func(b *Builder) *Instruction {
		return b.Map(b.Reducer(OpMaximum, F32), f32x23(b, "x"), f32x23(b, "y"))
	}
	textSamples[OpMap] = `HloModule MapBinaryAdder.v3
add_F32.v3 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}
ENTRY MapBinaryAdder.v3 {
  param0 = f32[4]{0} parameter(0)
  param1 = f32[4]{0} parameter(1)
  ROOT map = f32[4]{0} map(param0, param1), dimensions={0}, to_apply=add_F32.v3
}`
	opSamples[OpMulHi] = func(b *Builder) *Instruction {
		return b.MulHi(b.Parameter(MakeShape(U32, 4), "x"), b.Parameter(MakeShape(U32, 4), "y"))
	}
	textSamples[OpMulHi] = `HloModule jit_mulhi
ENTRY main.4 {
  Arg_0.1 = s64[8]{0} parameter(0)
  Arg_1.2 = s64[8]{0} parameter(1)
  ROOT mulhi.3 = s64[8]{0} mulhi(Arg_0.1, Arg_1.2)
}`
	opSamples[OpTopK] = func(b *Builder) *Instruction { return b.TopK(f32x23(b, "x"), 2, true) }
	textSamples[OpTopK] = `HloModule jit_top_k
ENTRY main.6 {
  Arg_0.1 = f32[5,10]{1,0} parameter(0)
  topk.2 = (f32[5,3]{1,0}, s32[5,3]{1,0}) topk(Arg_0.1), k=3, largest=true
  get-tuple-element.3 = f32[5,3]{1,0} get-tuple-element(topk.2), index=0
  get-tuple-element.4 = s32[5,3]{1,0} get-tuple-element(topk.2), index=1
  ROOT tuple.5 = (f32[5,3]{1,0}, s32[5,3]{1,0}) tuple(get-tuple-element.3, get-tuple-element.4)
}`
	opSamples[OpTriangularSolve] = func(b *Builder) *Instruction {
		a := b.Parameter(MakeShape(F32, 3, 3), "a")
		return b.TriangularSolve(a, b.Parameter(MakeShape(F32, 3, 2), "b"), true, true, false, Adjoint)
	}
	textSamples[OpTriangularSolve] = `HloModule jit_solve_triangular
ENTRY main.4 {
  Arg_0.1 = f32[2,4,4]{2,1,0} parameter(0)
  Arg_1.2 = f32[2,4,3]{2,1,0} parameter(1)
  ROOT triangular-solve.3 = f32[2,4,3]{2,1,0} triangular-solve(Arg_0.1, Arg_1.2), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}`
	opSamples[OpCholesky] = func(b *Builder) *Instruction {
		return b.Cholesky(b.Parameter(MakeShape(F64, 2, 4, 4), "a"), false)
	}
	textSamples[OpCholesky] = `HloModule jit_cholesky
ENTRY main.3 {
  Arg_0.1 = f32[4,4]{1,0} parameter(0)
  ROOT cholesky.2 = f32[4,4]{1,0} cholesky(Arg_0.1), lower=true
}`
}

// Samples of bitcast: a transpose written as layouts, as XLA's layout assignment
// leaves it in dumps.
func init() {
	opSamples[OpBitcast] = func(b *Builder) *Instruction {
		return b.Bitcast(f32x23(b, "x"), MakeShape(F32, 3, 2), []int64{0, 1}, nil)
	}
	textSamples[OpBitcast] = `HloModule jit_transpose_bitcast
ENTRY main.3 {
  Arg_0.1 = f32[2,3]{0,1} parameter(0)
  bitcast.2 = f32[3,2]{1,0} bitcast(Arg_0.1)
  ROOT negate.3 = f32[3,2]{1,0} negate(bitcast.2)
}`
}

// Samples of after-all: JAX's ordered effects thread a token parameter through.
func init() {
	opSamples[OpAfterAll] = func(b *Builder) *Instruction {
		return b.AfterAll(b.Parameter(Scalar(Token), "t0"), b.AfterAll())
	}
	textSamples[OpAfterAll] = `HloModule jit_ordered_effects
ENTRY main.6 {
  Arg_0.1 = token[] parameter(0)
  Arg_1.2 = f32[3]{0} parameter(1)
  after-all.3 = token[] after-all(Arg_0.1)
  sine.4 = f32[3]{0} sine(Arg_1.2)
  ROOT tuple.5 = (token[], f32[3]{0}) tuple(after-all.3, sine.4)
}`
}
