package hlo

// (This file sorts after infer.go, whose init makes the shape-rule table.)

import "fmt"

// get-dimension-size(x), dimensions={d} is the size of x's dimension d as an s32[]
// (XLA's; for dynamic shapes the runtime size). vkxla's shapes are static, so it is
// a constant: DimensionSizeExpander replaces it by one.

func init() {
	shapeRules[OpGetDimensionSize] = inferGetDimensionSize
	opAttrs[OpGetDimensionSize] = []attrUse{req("dimensions")}
}

func inferGetDimensionSize(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, dims := a.operands[0], a.attrs.Dimensions
	if len(dims) != 1 {
		return Shape{}, fmt.Errorf("dimensions=%v names %d dimensions, want one", dims, len(dims))
	}
	if err := checkDim("dimensions", dims[0], x.Rank()); err != nil {
		return Shape{}, err
	}
	if x.Dims[dims[0]] > 1<<31-1 {
		return Shape{}, fmt.Errorf("dimension %d of %v does not fit s32", dims[0], x)
	}
	return Scalar(S32), nil
}

// GetDimensionSize adds get-dimension-size(x), dimensions={d}.
func (b *Builder) GetDimensionSize(x *Instruction, d int64) *Instruction {
	return b.emit(opSpec{op: OpGetDimensionSize, operands: ins(x), attrs: Attributes{Dimensions: []int64{d}}})
}
