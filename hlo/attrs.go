package hlo

import "fmt"

// Attributes holds the op-specific fields of an instruction. One flat struct, as XLA's
// attribute set is small and most fields apply to one or two ops; which fields an op
// uses is fixed by shape inference and the printer, and unused fields stay zero.
type Attributes struct {
	// Dimensions: broadcast (operand dim → output dim), transpose (permutation),
	// reverse, reduce (reduced dims), concatenate and sort (one dim).
	Dimensions []int64
	// IotaDimension is iota's counting dimension.
	IotaDimension int64
	// Slice is slice's [start:limit:stride] per dimension.
	Slice []SliceDim
	// Padding is pad's low/high/interior per dimension.
	Padding []PadDim
	// Window is reduce-window's, select-and-scatter's and convolution's window.
	Window []WindowDim
	// Direction and CompareType are compare's.
	Direction   ComparisonDirection
	CompareType CompareType
	// Dot is dot's dimension numbers.
	Dot *DotDims
	// Conv is convolution's dim_labels; the group counts default to 1.
	Conv              *ConvDims
	FeatureGroupCount int64
	BatchGroupCount   int64
	// SliceSizes is dynamic-slice's dynamic_slice_sizes and gather's slice_sizes.
	SliceSizes []int64
	Gather     *GatherDims
	Scatter    *ScatterDims
	// IsStable is sort's.
	IsStable bool
	// TupleIndex is get-tuple-element's index.
	TupleIndex int64
	// ParameterNumber is parameter's position in its computation's signature.
	ParameterNumber int64
	// Literal is constant's value.
	Literal *Literal
	// FusionKind is fusion's kind= (XLA's fusion kind).
	FusionKind FusionKind
	// Epsilon and FeatureIndex are the batch-norm ops' epsilon= and feature_index=.
	Epsilon      float32
	FeatureIndex int64
	// ExponentBits and MantissaBits are reduce-precision's exponent_bits= and
	// mantissa_bits=: the format its operand is rounded to.
	ExponentBits, MantissaBits int64
	// K and Smallest are topk's k= and largest= (Smallest is largest=false).
	K        int64
	Smallest bool
	// LeftSide, Lower, UnitDiagonal and TransposeA are triangular-solve's options;
	// Lower is cholesky's lower= too.
	LeftSide, Lower, UnitDiagonal bool
	TransposeA                    TransposeKind
	// Layouts are a bitcast's operand and result layouts, as the text wrote them
	// (nil: both row-major, the only layout of every other value).
	Layouts *BitcastLayouts
	// RngAlgorithm is rng-bit-generator's algorithm=.
	RngAlgorithm RngAlgorithm
	// RngDistribution is rng's distribution=; RngDelta is
	// rng-get-and-update-state's delta=.
	RngDistribution RngDistribution
	RngDelta        int64
	// ReplicaGroups are a collective's replica_groups (nil: every replica);
	// SourceTargetPairs are collective-permute's source_target_pairs, each {s,t}.
	// (all-gather, reduce-scatter and all-to-all keep their dimension in Dimensions.)
	ReplicaGroups     [][]int64
	SourceTargetPairs [][]int64
	// ChannelID is a collective's channel_id (HasChannelID: one was written) and
	// UseGlobalDeviceIDs its use_global_device_ids: together they say whether the
	// ids of replica_groups and source_target_pairs name replicas, partitions or
	// devices (CollectiveGroupMode).
	ChannelID          int64
	HasChannelID       bool
	UseGlobalDeviceIDs bool
	// CustomCall holds a custom-call's attributes.
	CustomCall *CustomCallAttrs
	// FftType and FftLength are fft's fft_type= and fft_length=.
	FftType   FftType
	FftLength []int64
}

// SliceDim is one dimension of a slice: elements start, start+stride, … < limit.
type SliceDim struct{ Start, Limit, Stride int64 }

// Count is the number of elements the slice selects, ⌈(Limit−Start)/Stride⌉, for a
// valid slice (0 ≤ Start ≤ Limit, Stride ≥ 1); computed without overflow for any
// stride.
func (s SliceDim) Count() int64 {
	if s.Limit <= s.Start {
		return 0
	}
	return (s.Limit-s.Start-1)/s.Stride + 1
}

// PadDim is one dimension of a pad; negative low/high padding removes elements.
type PadDim struct{ Low, High, Interior int64 }

// WindowDim is one dimension of a window, with XLA's fields. A zero dilation or stride
// is never valid; NewWindowDim gives the defaults (stride and dilations 1).
type WindowDim struct {
	Size, Stride    int64
	PadLow, PadHigh int64
	WindowDilation  int64 // rhs_dilation for convolution
	BaseDilation    int64 // lhs_dilation for convolution
	WindowReversal  bool
}

// NewWindowDim returns a window dimension of the given size with unit stride and
// dilations and no padding.
func NewWindowDim(size int64) WindowDim {
	return WindowDim{Size: size, Stride: 1, WindowDilation: 1, BaseDilation: 1}
}

// ComparisonDirection is compare's direction.
type ComparisonDirection uint8

// The comparison directions.
const (
	CmpEQ ComparisonDirection = iota
	CmpNE
	CmpLT
	CmpLE
	CmpGT
	CmpGE
)

var directionNames = [...]string{"EQ", "NE", "LT", "LE", "GT", "GE"}

func (d ComparisonDirection) String() string {
	if int(d) < len(directionNames) {
		return directionNames[d]
	}
	return fmt.Sprintf("direction(%d)", uint8(d))
}

// ParseComparisonDirection maps "EQ", "LT", … to a direction.
func ParseComparisonDirection(s string) (ComparisonDirection, error) {
	for i, n := range directionNames {
		if n == s {
			return ComparisonDirection(i), nil
		}
	}
	return 0, fmt.Errorf("unknown comparison direction %q", s)
}

// CompareType is compare's optional type= attribute. CompareDefault follows the
// operand type (FLOAT with IEEE semantics for floats, SIGNED/UNSIGNED for integers);
// CompareTotalOrder orders floats as -NaN < -Inf < … < -0 < +0 < … < +Inf < +NaN.
type CompareType uint8

// The compare types.
const (
	CompareDefault CompareType = iota
	CompareFloat
	CompareTotalOrder
	CompareSigned
	CompareUnsigned
)

var compareTypeNames = [...]string{"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}

func (c CompareType) String() string {
	if int(c) < len(compareTypeNames) {
		return compareTypeNames[c]
	}
	return fmt.Sprintf("comparetype(%d)", uint8(c))
}

// ParseCompareType maps "FLOAT", "TOTALORDER", … to a compare type.
func ParseCompareType(s string) (CompareType, error) {
	for i, n := range compareTypeNames {
		if n == s && i != 0 {
			return CompareType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown comparison type %q", s)
}

// FusionKind is a fusion instruction's kind=, as XLA names it. It records what the
// fusion pass fused, for printing and for XLA's tools:
//
//   - FusionLoop (kLoop): elementwise and data-movement ops fused into one loop over
//     the output;
//   - FusionInput (kInput): a reduction root with its producers fused into it;
//   - FusionOutput (kOutput): a dot or convolution with a fused epilogue;
//   - FusionCustom (kCustom): anything else.
//
// vkxla lowers every kind the same way: the called computation becomes one kernel
// computation. The kind changes nothing that is computed.
type FusionKind uint8

// The fusion kinds.
const (
	FusionLoop FusionKind = iota
	FusionInput
	FusionOutput
	FusionCustom
)

var fusionKindNames = [...]string{"kLoop", "kInput", "kOutput", "kCustom"}

func (k FusionKind) String() string {
	if int(k) < len(fusionKindNames) {
		return fusionKindNames[k]
	}
	return fmt.Sprintf("fusionkind(%d)", uint8(k))
}

// IsValid reports whether k is one of the four fusion kinds.
func (k FusionKind) IsValid() bool { return int(k) < len(fusionKindNames) }

// ParseFusionKind maps "kLoop", "kInput", "kOutput" and "kCustom" to a fusion kind.
func ParseFusionKind(s string) (FusionKind, error) {
	for i, n := range fusionKindNames {
		if n == s {
			return FusionKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown fusion kind %q (want kLoop, kInput, kOutput or kCustom)", s)
}

// DotDims are dot's dimension numbers. The output is batch dims, then lhs free dims,
// then rhs free dims, each in operand order.
type DotDims struct {
	LhsBatch, RhsBatch             []int64
	LhsContracting, RhsContracting []int64
}

// ConvDims are convolution's dimension numbers, as dim_labels such as b01f_01io->b01f
// spell them: which dimension is batch, feature and each spatial dimension.
type ConvDims struct {
	InputBatch, InputFeature   int64
	InputSpatial               []int64
	KernelInput, KernelOutput  int64
	KernelSpatial              []int64
	OutputBatch, OutputFeature int64
	OutputSpatial              []int64
}

// GatherDims are gather's dimension numbers (XLA operation semantics).
type GatherDims struct {
	OffsetDims         []int64
	CollapsedSliceDims []int64
	StartIndexMap      []int64
	IndexVectorDim     int64
	// Batching dims (XLA's operand_batching_dims / start_indices_batching_dims).
	OperandBatchingDims      []int64
	StartIndicesBatchingDims []int64
}

// ScatterDims are scatter's dimension numbers (XLA operation semantics).
type ScatterDims struct {
	UpdateWindowDims           []int64
	InsertedWindowDims         []int64
	ScatterDimsToOperandDims   []int64
	IndexVectorDim             int64
	InputBatchingDims          []int64
	ScatterIndicesBatchingDims []int64
	IndicesAreSorted           bool
	UniqueIndices              bool
}
