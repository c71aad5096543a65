package nn

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// MaxPool2D is the maximum over size×size windows of x [N, H, W, C], moved by
// stride in both spatial dimensions (padding as pad says, with −∞ so that a pad
// never wins).
func MaxPool2D(b *hlo.Builder, x X, size, stride int64, pad Padding) X {
	dt := x.Shape.DType
	spatial := spatialWindow(x, []int64{size, size}, stride, pad)
	w := []hlo.WindowDim{hlo.NewWindowDim(1), spatial[0], spatial[1], hlo.NewWindowDim(1)}
	return b.ReduceWindow([]X{x}, []X{b.ScalarConstant(dt, math.Inf(-1))}, b.Reducer(hlo.OpMaximum, dt), w)
}

// GlobalAvgPool is the mean of x [N, H, W, C] over H and W: [N, C].
func GlobalAvgPool(b *hlo.Builder, x X) X {
	dt := x.Shape.DType
	sum := b.Reduce([]X{x}, []X{b.ScalarConstant(dt, 0)}, b.Reducer(hlo.OpAdd, dt), []int64{1, 2})
	return b.Div(sum, scalar(b, sum, float64(x.Shape.Dims[1]*x.Shape.Dims[2])))
}
