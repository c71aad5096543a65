package hlo

// Builder samples of the expanded ops, joining opSamples.
func init() {
	f32 := func(b *Builder, name string, dims ...int64) *Instruction {
		return b.Parameter(MakeShape(F32, dims...), name)
	}
	for op, sample := range map[Opcode]func(b *Builder) *Instruction{
		OpBatchNormTraining: func(b *Builder) *Instruction {
			return b.BatchNormTraining(f32(b, "x", 2, 3, 4), f32(b, "scale", 3), f32(b, "offset", 3), 0.001, 1)
		},
		OpBatchNormInference: func(b *Builder) *Instruction {
			return b.BatchNormInference(f32(b, "x", 2, 3), f32(b, "scale", 3), f32(b, "offset", 3),
				f32(b, "mean", 3), f32(b, "var", 3), 0.001, 1)
		},
		OpBatchNormGrad: func(b *Builder) *Instruction {
			return b.BatchNormGrad(f32(b, "x", 4, 2), f32(b, "scale", 2), f32(b, "mean", 2), f32(b, "var", 2),
				f32(b, "dy", 4, 2), 0.001, 1)
		},
		OpRngBitGenerator: func(b *Builder) *Instruction {
			return b.RngBitGenerator(b.Parameter(MakeShape(U64, 2), "state"), RngPhilox, MakeShape(U32, 3, 5))
		},
		OpRng: func(b *Builder) *Instruction {
			return b.Rng(b.Parameter(Scalar(F32), "a"), b.Parameter(Scalar(F32), "b"), RngNormal, MakeShape(F32, 3, 5))
		},
		OpRngGetAndUpdateState: func(b *Builder) *Instruction { return b.RngGetAndUpdateState(8) },
		OpCustomCall: func(b *Builder) *Instruction {
			return b.CustomCall("Sharding", []*Instruction{f32x23(b, "x")}, MakeShape(F32, 2, 3),
				&CustomCallAttrs{OutputToOperandAliasing: []OutputOperandAlias{{Operand: 0}}})
		},
		OpAllReduce: func(b *Builder) *Instruction {
			return b.Collective(OpAllReduce, []*Instruction{f32x23(b, "x")}, [][]int64{{0}}, nil, b.Reducer(OpAdd, F32))
		},
		OpAllReduceStart: func(b *Builder) *Instruction {
			return b.Collective(OpAllReduceStart, []*Instruction{f32x23(b, "x"), f32(b, "y", 4)}, nil, nil, b.Reducer(OpAdd, F32))
		},
		OpAllReduceDone: func(b *Builder) *Instruction {
			return b.AsyncDone(OpAllReduceDone, b.Collective(OpAllReduceStart, []*Instruction{f32x23(b, "x")}, nil, nil, b.Reducer(OpAdd, F32)))
		},
		OpAllGather: func(b *Builder) *Instruction {
			return b.Collective(OpAllGather, []*Instruction{f32x23(b, "x")}, [][]int64{{0}}, []int64{1}, nil)
		},
		OpAllGatherStart: func(b *Builder) *Instruction {
			return b.Collective(OpAllGatherStart, []*Instruction{f32x23(b, "x")}, nil, []int64{0}, nil)
		},
		OpAllGatherDone: func(b *Builder) *Instruction {
			return b.AsyncDone(OpAllGatherDone, b.Collective(OpAllGatherStart, []*Instruction{f32x23(b, "x")}, nil, []int64{0}, nil))
		},
		OpReduceScatter: func(b *Builder) *Instruction {
			return b.Collective(OpReduceScatter, []*Instruction{f32x23(b, "x")}, [][]int64{{0}}, []int64{0}, b.Reducer(OpMaximum, F32))
		},
		OpAllToAll: func(b *Builder) *Instruction {
			return b.Collective(OpAllToAll, []*Instruction{f32x23(b, "x")}, [][]int64{{0}}, []int64{1}, nil)
		},
		OpCollectivePermute: func(b *Builder) *Instruction {
			return b.CollectivePermute(OpCollectivePermute, f32x23(b, "x"), [][]int64{{0, 0}})
		},
		OpCollectivePermuteStart: func(b *Builder) *Instruction {
			return b.CollectivePermute(OpCollectivePermuteStart, f32x23(b, "x"), nil)
		},
		OpCollectivePermuteDone: func(b *Builder) *Instruction {
			return b.AsyncDone(OpCollectivePermuteDone, b.CollectivePermute(OpCollectivePermuteStart, f32x23(b, "x"), nil))
		},
		OpReplicaID:   func(b *Builder) *Instruction { return b.ReplicaID() },
		OpPartitionID: func(b *Builder) *Instruction { return b.PartitionID() },
		OpCollectiveBroadcast: func(b *Builder) *Instruction {
			return b.Collective(OpCollectiveBroadcast, []*Instruction{f32x23(b, "x")}, [][]int64{{0}}, nil, nil)
		},
	} {
		opSamples[op] = sample
	}
}

// Text samples of the expanded ops, in the style of XLA's dumps, joining
// textSamples.
func init() {
	for op, text := range map[Opcode]string{
		OpBatchNormTraining: `HloModule bn
ENTRY e {
  x = f32[2,3,4] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT t = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}`,
		OpBatchNormInference: `HloModule bn
ENTRY e {
  x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  ROOT y = f32[2,3] batch-norm-inference(x, s, s, s, s), epsilon=1e-05, feature_index=1
}`,
		OpBatchNormGrad: `HloModule bn
ENTRY e {
  x = f32[4,2] parameter(0)
  s = f32[2] parameter(1)
  ROOT g = (f32[4,2], f32[2], f32[2]) batch-norm-grad(x, s, s, s, x), epsilon=0.5, feature_index=1
}`,
		OpRngBitGenerator: `HloModule rng
ENTRY e {
  st = u64[3] parameter(0)
  ROOT r = (u64[3], u32[2,5]) rng-bit-generator(st), algorithm=rng_philox
}`,
		OpRng: `HloModule rng
ENTRY e {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[4,3]{1,0} rng(a, b), distribution=rng_uniform
}`,
		OpRngGetAndUpdateState: `HloModule rng_state
ENTRY e {
  ROOT s = u64[2]{0} rng-get-and-update-state(), delta=12
}`,
		OpCustomCall: `HloModule cc
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[2,8] parameter(0)
  sh = f32[2,8] custom-call(x), custom_call_target="Sharding", custom_call_has_side_effect=true, sharding={replicated}
  io = f32[2,8] custom-call(sh), custom_call_target="annotate_device_placement", api_version=API_VERSION_TYPED_FFI, backend_config={k = 4 : i64, largest = true}, operand_layout_constraints={f32[2,8]{1,0}}, output_to_operand_aliasing={{}: (0, {})}, schedule=SCHEDULE_LATEST
  ROOT tk = (f32[2,3], s32[2,3]) custom-call(io), custom_call_target="TopK", backend_config="{\"k\": 3}", called_computations={cmp}
}`,
		OpAllReduce: `HloModule ar
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), channel_id=1, replica_groups={{0}}, use_global_device_ids=true, to_apply=add
}`,
		OpAllReduceStart: `HloModule ar
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[] parameter(1)
  ROOT r = (f32[4], f32[]) all-reduce-start(x, y), replica_groups={}, to_apply=add
}`,
		OpAllReduceDone: `HloModule ar
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  s = f32[4] all-reduce-start(x), replica_groups=[1,1]<=[1], to_apply=add
  ROOT d = f32[4] all-reduce-done(s)
}`,
		OpAllGather: `HloModule ag
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT g = f32[2,3] all-gather(x), channel_id=2, replica_groups={{0}}, dimensions={1}
}`,
		OpAllGatherStart: `HloModule ag
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT g = (f32[2,3], f32[2,3]) all-gather-start(x), replica_groups={}, dimensions={0}
}`,
		OpAllGatherDone: `HloModule ag
ENTRY e {
  x = f32[2,3] parameter(0)
  s = (f32[2,3], f32[2,3]) all-gather-start(x), replica_groups={}, dimensions={0}
  ROOT d = f32[2,3] all-gather-done(s)
}`,
		OpReduceScatter: `HloModule rs
mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[6] parameter(0)
  ROOT r = s32[6] reduce-scatter(x), replica_groups={{0}}, dimensions={0}, to_apply=mx
}`,
		OpAllToAll: `HloModule a2a
ENTRY e {
  x = f32[4,2] parameter(0)
  ROOT r = f32[4,2] all-to-all(x), replica_groups={{0}}, dimensions={0}
}`,
		OpCollectivePermute: `HloModule cp
ENTRY e {
  x = f32[3] parameter(0)
  ROOT r = f32[3] collective-permute(x), channel_id=3, source_target_pairs={{0,0}}
}`,
		OpCollectivePermuteStart: `HloModule cp
ENTRY e {
  x = f32[3] parameter(0)
  ROOT r = (f32[3], f32[3], u32[], u32[]) collective-permute-start(x), source_target_pairs={}
}`,
		OpCollectivePermuteDone: `HloModule cp
ENTRY e {
  x = f32[3] parameter(0)
  s = (f32[3], f32[3]) collective-permute-start(x), source_target_pairs={{0,0}}
  ROOT r = f32[3] collective-permute-done(s)
}`,
		OpReplicaID: `HloModule id
ENTRY e {
  ROOT r = u32[] replica-id()
}`,
		OpPartitionID: `HloModule id
ENTRY e {
  ROOT r = u32[] partition-id()
}`,
		OpCollectiveBroadcast: `HloModule cb
ENTRY e {
  x = f32[3] parameter(0)
  ROOT r = f32[3] collective-broadcast(x), channel_id=1, replica_groups={{0}}
}`,
	} {
		textSamples[op] = text
	}
}

// Samples of opt-barrier: a tuple through the barrier, as JAX's checkpointing dumps
// it.
func init() {
	opSamples[OpOptBarrier] = func(b *Builder) *Instruction {
		return b.OptBarrier(b.Tuple(f32x23(b, "x"), b.Parameter(MakeShape(S32), "i")))
	}
	textSamples[OpOptBarrier] = `HloModule jit_checkpointed
ENTRY main.9 {
  Arg_0.1 = f32[4,3] parameter(0)
  sine.2 = f32[4,3] sine(Arg_0.1)
  tuple.3 = (f32[4,3], f32[4,3]) tuple(Arg_0.1, sine.2)
  opt-barrier.4 = (f32[4,3], f32[4,3]) opt-barrier(tuple.3)
  get-tuple-element.5 = f32[4,3] get-tuple-element(opt-barrier.4), index=1
  ROOT cosine.6 = f32[4,3] cosine(get-tuple-element.5)
}`
}

// Samples of reduce-precision: f32 rounded to bf16's format, as mixed-precision
// dumps do.
func init() {
	opSamples[OpReducePrecision] = func(b *Builder) *Instruction { return b.ReducePrecision(f32x23(b, "x"), 8, 7) }
	textSamples[OpReducePrecision] = `HloModule jit_bf16_round
ENTRY main.3 {
  Arg_0.1 = f32[2,3] parameter(0)
  ROOT reduce-precision.2 = f32[2,3] reduce-precision(Arg_0.1), exponent_bits=5, mantissa_bits=10
}`
}

// Samples of get-dimension-size, as jax2tf's shape-polymorphic dumps use it.
func init() {
	opSamples[OpGetDimensionSize] = func(b *Builder) *Instruction { return b.GetDimensionSize(f32x23(b, "x"), 1) }
	textSamples[OpGetDimensionSize] = `HloModule jit_shape_poly
ENTRY main.3 {
  Arg_0.1 = f32[4,7] parameter(0)
  ROOT get-dimension-size.2 = s32[] get-dimension-size(Arg_0.1), dimensions={1}
}`
}
