// Package nn builds the layers, losses and optimizer updates of common models as
// HLO, on an hlo.Builder: what a Go user writes a model with, and what the model
// benchmarks and the training programs are made of. Every function adds
// instructions to the builder it is given and returns the result; errors stick in
// the builder, as everywhere in hlo. Shapes follow the JAX/Flax conventions: the
// feature dimension is the last one, images are NHWC, convolution kernels HWIO,
// dense kernels [in, out].
package nn

import "github.com/vkxla/vkxla/hlo"

// X is an instruction: a value in the graph being built.
type X = *hlo.Instruction

// scalar is a constant of x's element type, broadcast to x's shape.
func scalar(b *hlo.Builder, like X, v float64) X {
	return b.BroadcastScalar(b.ScalarConstant(like.Shape.DType, v), like.Shape.Dims...)
}

// broadcastTrailing broadcasts v (the shape of x's trailing dimensions) to x's
// shape, as NumPy broadcasting adds leading dimensions.
func broadcastTrailing(b *hlo.Builder, v, x X) X {
	rank, vrank := x.Shape.Rank(), v.Shape.Rank()
	dims := make([]int64, vrank)
	for i := range dims {
		dims[i] = int64(rank - vrank + i)
	}
	return b.Broadcast(v, x.Shape.Dims, dims)
}

// keepDims broadcasts r, x reduced over its last dimension, back to x's shape.
func keepLast(b *hlo.Builder, r, x X) X {
	dims := make([]int64, x.Shape.Rank()-1)
	for i := range dims {
		dims[i] = int64(i)
	}
	return b.Broadcast(r, x.Shape.Dims, dims)
}

// reduceLast reduces x over its last dimension with op (add, maximum, …) from init.
func reduceLast(b *hlo.Builder, x X, op hlo.Opcode, init float64) X {
	dt := x.Shape.DType
	last := int64(x.Shape.Rank() - 1)
	return b.Reduce([]X{x}, []X{b.ScalarConstant(dt, init)}, b.Reducer(op, dt), []int64{last})
}

// meanLast is the mean over x's last dimension, broadcast back to x's shape.
func meanLast(b *hlo.Builder, x X) X {
	n := float64(x.Shape.Dims[x.Shape.Rank()-1])
	return b.Div(keepLast(b, reduceLast(b, x, hlo.OpAdd, 0), x), scalar(b, x, n))
}
