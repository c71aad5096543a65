package hlo

import (
	"errors"
	"fmt"
)

// Shape rules of dot and convolution. Operand element types must be equal and
// numeric; the result type is theirs or a declared widening (contractionType).
// Both also take complex operands (c64, c128), as XLA's InferDotOpShape and
// InferConvolveShape do.

func sameNumericTypes(l, r Shape) error {
	if l.DType != r.DType {
		return fmt.Errorf("operand types of %v and %v differ", l, r)
	}
	if !l.DType.IsNumeric() {
		return fmt.Errorf("operands %v and %v are not numeric", l, r)
	}
	return nil
}

// complexOrNumericTypes is sameNumericTypes with complex types allowed: both
// operands the same complex type (a real and a complex operand differ, and are
// refused).
func complexOrNumericTypes(l, r Shape) error {
	if l.DType == r.DType && l.DType.IsComplex() {
		return nil
	}
	return sameNumericTypes(l, r)
}

// inferDot: the result is the batch dims (in lhs order), then the lhs free dims,
// then the rhs free dims. A nil Dot means no batch or contracting dims (an outer
// product), as XLA's parser defaults.
func inferDot(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	l, r := a.operands[0], a.operands[1]
	if err := complexOrNumericTypes(l, r); err != nil {
		return Shape{}, err
	}
	d := a.attrs.Dot
	if d == nil {
		d = &DotDims{}
	}
	if err := checkDotDims(l, r, d); err != nil {
		return Shape{}, err
	}
	var out []int64
	for _, b := range d.LhsBatch {
		out = append(out, l.Dims[b])
	}
	out = append(out, freeDims(l, d.LhsBatch, d.LhsContracting)...)
	out = append(out, freeDims(r, d.RhsBatch, d.RhsContracting)...)
	dt, err := contractionType(l.DType, a.declared)
	return MakeShape(dt, out...), err
}

// contractionType is the result type of a dot or convolution of operands of type
// operand: the operand type, or the declared result's type where it is a widening
// (XLA's preferred_element_type) that PreferredTypeAllowed accepts.
func contractionType(operand DType, declared *Shape) (DType, error) {
	if declared == nil || !declared.IsArray() || declared.DType == operand {
		return operand, nil
	}
	if !PreferredTypeAllowed(operand, declared.DType) {
		return 0, fmt.Errorf("result type %v is not a widening of the operand type %v "+
			"(preferred element types: s8→s16/s32/s64, u8→u16/u32/u64 and wider signed types, "+
			"bf16/f16→f32/f64, f32→f64, and so on)", declared.DType, operand)
	}
	return declared.DType, nil
}

// PreferredTypeAllowed reports whether a dot or convolution of operand-typed
// operands may produce result-typed values (XLA's preferred_element_type): a
// float widened to a wider float, an integer to a wider integer that holds all
// its values (signed to signed; unsigned to unsigned or signed). Every product
// is then exact in the result type.
func PreferredTypeAllowed(operand, result DType) bool {
	switch {
	case operand.IsFloat() && result.IsFloat():
		return result.Bits() > operand.Bits()
	case operand.IsSigned() && result.IsSigned():
		return result.Bits() > operand.Bits()
	case operand.IsUnsigned() && result.IsInteger():
		return result.Bits() > operand.Bits()
	}
	return false
}

func checkDotDims(l, r Shape, d *DotDims) error {
	if len(d.LhsBatch) != len(d.RhsBatch) || len(d.LhsContracting) != len(d.RhsContracting) {
		return fmt.Errorf("lhs and rhs batch dims %v/%v or contracting dims %v/%v differ in count",
			d.LhsBatch, d.RhsBatch, d.LhsContracting, d.RhsContracting)
	}
	lhsDims := append(append([]int64{}, d.LhsBatch...), d.LhsContracting...)
	if err := checkDimSet("lhs batch and contracting dims", lhsDims, l.Rank()); err != nil {
		return fmt.Errorf("lhs %v: %w", l, err)
	}
	rhsDims := append(append([]int64{}, d.RhsBatch...), d.RhsContracting...)
	if err := checkDimSet("rhs batch and contracting dims", rhsDims, r.Rank()); err != nil {
		return fmt.Errorf("rhs %v: %w", r, err)
	}
	for i := range lhsDims {
		if l.Dims[lhsDims[i]] != r.Dims[rhsDims[i]] {
			return fmt.Errorf("lhs %v dimension %d and rhs %v dimension %d differ in size",
				l, lhsDims[i], r, rhsDims[i])
		}
	}
	return nil
}

// freeDims returns the sizes of the dims of s that are in neither list, in order.
func freeDims(s Shape, batch, contracting []int64) []int64 {
	var out []int64
	for _, d := range Complement(s.Rank(), batch, contracting) {
		out = append(out, s.Dims[d])
	}
	return out
}

// groupCounts returns convolution's feature and batch group counts; zero (unset)
// means 1.
func groupCounts(attrs *Attributes) (feature, batch int64) {
	feature, batch = attrs.FeatureGroupCount, attrs.BatchGroupCount
	if feature == 0 {
		feature = 1
	}
	if batch == 0 {
		batch = 1
	}
	return feature, batch
}

// inferConvolution follows XLA's general convolution: dim_labels place the batch,
// feature and spatial dims of input, kernel and output; the window (one entry per
// spatial dim, its size the kernel's) gives stride, padding and lhs/rhs dilation.
// With feature_group_count G the input features split into G groups of the kernel's
// input features, and the kernel's output features into G groups; with
// batch_group_count B the input batch splits into B groups.
func inferConvolution(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	in, k := a.operands[0], a.operands[1]
	if err := complexOrNumericTypes(in, k); err != nil {
		return Shape{}, err
	}
	cd := a.attrs.Conv
	if cd == nil {
		return Shape{}, errors.New("has no dim_labels")
	}
	if err := checkConvDims(in, k, cd, len(a.attrs.Window)); err != nil {
		return Shape{}, err
	}
	if err := checkConvGroups(in, k, cd, a.attrs); err != nil {
		return Shape{}, err
	}
	spatial := make([]int64, len(cd.InputSpatial))
	for i, d := range cd.InputSpatial {
		spatial[i] = in.Dims[d]
		if size := k.Dims[cd.KernelSpatial[i]]; a.attrs.Window[i].Size != size {
			return Shape{}, fmt.Errorf("window dimension %d has size %d, but kernel %v spatial dimension %d has size %d",
				i, a.attrs.Window[i].Size, k, cd.KernelSpatial[i], size)
		}
	}
	spatialOut, err := windowOutput(MakeShape(in.DType, spatial...), a.attrs.Window, true)
	if err != nil {
		return Shape{}, err
	}
	_, batchGroups := groupCounts(a.attrs)
	out := make([]int64, in.Rank())
	out[cd.OutputBatch] = in.Dims[cd.InputBatch] / batchGroups
	out[cd.OutputFeature] = k.Dims[cd.KernelOutput]
	for i, d := range cd.OutputSpatial {
		out[d] = spatialOut[i]
	}
	dt, err := contractionType(in.DType, a.declared)
	return MakeShape(dt, out...), err
}

// checkConvDims checks that dim_labels name every dimension of input, kernel and
// output exactly once, with n spatial dims each.
func checkConvDims(in, k Shape, cd *ConvDims, n int) error {
	if len(cd.InputSpatial) != n || len(cd.KernelSpatial) != n || len(cd.OutputSpatial) != n {
		return fmt.Errorf("dim_labels have %d/%d/%d spatial dims, the window has %d",
			len(cd.InputSpatial), len(cd.KernelSpatial), len(cd.OutputSpatial), n)
	}
	if in.Rank() != n+2 || k.Rank() != n+2 {
		return fmt.Errorf("input %v and kernel %v must have rank %d for %d spatial dims", in, k, n+2, n)
	}
	labels := []struct {
		what string
		dims []int64
	}{
		{"input dim_labels", append([]int64{cd.InputBatch, cd.InputFeature}, cd.InputSpatial...)},
		{"kernel dim_labels", append([]int64{cd.KernelInput, cd.KernelOutput}, cd.KernelSpatial...)},
		{"output dim_labels", append([]int64{cd.OutputBatch, cd.OutputFeature}, cd.OutputSpatial...)},
	}
	for _, l := range labels {
		if err := checkDimSet(l.what, l.dims, n+2); err != nil {
			return err
		}
	}
	return nil
}

func checkConvGroups(in, k Shape, cd *ConvDims, attrs *Attributes) error {
	g, b := groupCounts(attrs)
	if g < 1 || b < 1 {
		return fmt.Errorf("feature_group_count %d and batch_group_count %d must be at least 1", g, b)
	}
	if g > 1 && b > 1 {
		return fmt.Errorf("feature_group_count %d and batch_group_count %d cannot both exceed 1", g, b)
	}
	inFeatures, kIn, kOut := in.Dims[cd.InputFeature], k.Dims[cd.KernelInput], k.Dims[cd.KernelOutput]
	if inFeatures%g != 0 || inFeatures/g != kIn {
		return fmt.Errorf("input %v has %d features; with feature_group_count %d the kernel %v needs %d input features, has %d",
			in, inFeatures, g, k, inFeatures/g, kIn)
	}
	if kOut%g != 0 || kOut%b != 0 {
		return fmt.Errorf("kernel %v output features %d are not divisible by the group count %d", k, kOut, max(g, b))
	}
	if batch := in.Dims[cd.InputBatch]; batch%b != 0 {
		return fmt.Errorf("input %v batch %d is not divisible by batch_group_count %d", in, batch, b)
	}
	return nil
}
