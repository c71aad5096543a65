package hlo

// Builder methods of the ops expander passes rewrite before code generation.

// BatchNormTraining normalises x over every dimension but featureIndex; the result
// is (output, batch mean, batch variance).
func (b *Builder) BatchNormTraining(x, scale, offset *Instruction, epsilon float32, featureIndex int64) *Instruction {
	return b.emit(opSpec{op: OpBatchNormTraining, operands: ins(x, scale, offset),
		attrs: Attributes{Epsilon: epsilon, FeatureIndex: featureIndex}})
}

// BatchNormInference normalises x with the given per-feature mean and variance.
func (b *Builder) BatchNormInference(x, scale, offset, mean, variance *Instruction, epsilon float32, featureIndex int64) *Instruction {
	return b.emit(opSpec{op: OpBatchNormInference, operands: ins(x, scale, offset, mean, variance),
		attrs: Attributes{Epsilon: epsilon, FeatureIndex: featureIndex}})
}

// BatchNormGrad is the gradient of batch-norm-training: (grad_operand, grad_scale,
// grad_offset).
func (b *Builder) BatchNormGrad(x, scale, mean, variance, gradOutput *Instruction, epsilon float32, featureIndex int64) *Instruction {
	return b.emit(opSpec{op: OpBatchNormGrad, operands: ins(x, scale, mean, variance, gradOutput),
		attrs: Attributes{Epsilon: epsilon, FeatureIndex: featureIndex}})
}

// RngBitGenerator returns (new state, random bits of the given shape).
func (b *Builder) RngBitGenerator(state *Instruction, alg RngAlgorithm, bits Shape) *Instruction {
	out := bits.Clone()
	return b.emit(opSpec{op: OpRngBitGenerator, operands: ins(state), attrs: Attributes{RngAlgorithm: alg},
		result: func(s []Shape) Shape { return MakeTuple(s[0], out).Clone() }})
}

// Collective adds a collective op of the one-device subset (all-reduce,
// all-gather, reduce-scatter, all-to-all, collective-broadcast and the -start forms): groups are its
// replica_groups, dims its dimensions (nil where the op has none), reducer its
// to_apply (nil where it has none).
func (b *Builder) Collective(op Opcode, operands []*Instruction, groups [][]int64, dims []int64, reducer *Computation) *Instruction {
	var called []*Computation
	if reducer != nil {
		called = []*Computation{reducer}
	}
	return b.emit(opSpec{op: op, operands: operands, called: called,
		attrs: Attributes{ReplicaGroups: cloneIntLists(groups), Dimensions: cloneInts(dims)}})
}

// CollectivePermute adds collective-permute (or its -start form) with the given
// {source, target} pairs.
func (b *Builder) CollectivePermute(op Opcode, x *Instruction, pairs [][]int64) *Instruction {
	return b.emit(opSpec{op: op, operands: ins(x), attrs: Attributes{SourceTargetPairs: cloneIntLists(pairs)}})
}

// AsyncDone adds an async -done op (all-reduce-done, all-gather-done,
// collective-permute-done) of its -start.
func (b *Builder) AsyncDone(op Opcode, start *Instruction) *Instruction {
	return b.emit(opSpec{op: op, operands: ins(start)})
}

// ReplicaID adds replica-id(), a u32[] (0 on one device).
func (b *Builder) ReplicaID() *Instruction { return b.emit(opSpec{op: OpReplicaID}) }

// PartitionID adds partition-id(), a u32[] (0 on one device).
func (b *Builder) PartitionID() *Instruction { return b.emit(opSpec{op: OpPartitionID}) }
