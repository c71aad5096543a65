package hlo

import "fmt"

// The attribute table of the HLO text form: for every opcode, the attributes it
// prints and parses, in XLA's printing order. One row per attribute name gives its
// printer and parser, so that the printer and the parser cannot drift apart, and
// TestRoundTripEveryOpcode proves every op row is covered.

// attrCodec prints and parses one attribute. print returns the value text and whether
// the attribute is printed at all (defaults are left out, as XLA leaves them out).
// parse reads the value (the lexer stands after '=') into the instruction.
type attrCodec struct {
	print func(in *Instruction) (string, bool)
	parse func(p *parser, in *Instruction) error
}

// attrUse is one attribute of one opcode.
type attrUse struct {
	name     string
	required bool
	codec    attrCodec
}

func req(name string) attrUse { return attrUse{name: name, required: true, codec: attrCodecs[name]} }
func opt(name string) attrUse { return attrUse{name: name, codec: attrCodecs[name]} }

// opAttrs lists each opcode's attributes in printing order. Opcodes without
// attributes (elementwise ops, tuple, …) have no entry. Called computations come last,
// as XLA prints them.
var opAttrs = map[Opcode][]attrUse{
	OpIota:    {req("iota_dimension")},
	OpCompare: {req("direction"), opt("type")},
	// broadcast of a scalar may leave dimensions out (XLA's rule); shape
	// inference refuses a missing one for any other operand.
	OpBroadcast:        {opt("dimensions")},
	OpTranspose:        {req("dimensions")},
	OpReverse:          {req("dimensions")},
	OpConcatenate:      {req("dimensions")},
	OpSlice:            {req("slice")},
	OpPad:              {req("padding")},
	OpDynamicSlice:     {req("dynamic_slice_sizes")},
	OpGetTupleElement:  {req("index")},
	OpReduce:           {req("dimensions"), req("to_apply")},
	OpReduceWindow:     {opt("window"), req("to_apply")},
	OpSelectAndScatter: {opt("window"), req("select"), req("scatter")},
	OpDot: {opt("lhs_batch_dims"), opt("lhs_contracting_dims"),
		opt("rhs_batch_dims"), opt("rhs_contracting_dims")},
	OpConvolution: {opt("window"), req("dim_labels"), opt("feature_group_count"), opt("batch_group_count")},
	OpGather: {req("offset_dims"), req("collapsed_slice_dims"), req("start_index_map"),
		opt("operand_batching_dims"), opt("start_indices_batching_dims"),
		req("index_vector_dim"), req("slice_sizes")},
	OpScatter: {req("update_window_dims"), req("inserted_window_dims"),
		req("scatter_dims_to_operand_dims"), opt("input_batching_dims"),
		opt("scatter_indices_batching_dims"), req("index_vector_dim"),
		opt("indices_are_sorted"), opt("unique_indices"), req("to_apply")},
	OpSort:   {req("dimensions"), opt("is_stable"), req("to_apply")},
	OpWhile:  {req("condition"), req("body")},
	OpCall:   {req("to_apply")},
	OpFusion: {req("kind"), req("calls")},
	// branch_computations is printed; XLA's true_computation/false_computation form
	// for a pred-selected conditional is accepted too (parseInstruction checks that
	// one of the two forms is complete).
	OpConditional: {opt("branch_computations"), opt("true_computation"), opt("false_computation")},
}

var attrCodecs = map[string]attrCodec{
	"dimensions":     intListCodec(func(a *Attributes) *[]int64 { return &a.Dimensions }, anyList),
	"iota_dimension": intCodec(func(a *Attributes) *int64 { return &a.IotaDimension }, anyInt),
	"index":          intCodec(func(a *Attributes) *int64 { return &a.TupleIndex }, anyInt),
	"slice": {
		print: func(in *Instruction) (string, bool) { return sliceText(in.Attrs.Slice), true },
		parse: func(p *parser, in *Instruction) (err error) { in.Attrs.Slice, err = p.parseSliceDims(); return },
	},
	"padding": {
		print: func(in *Instruction) (string, bool) { return paddingText(in.Attrs.Padding), true },
		parse: func(p *parser, in *Instruction) (err error) { in.Attrs.Padding, err = p.parsePadding(); return },
	},
	"window": {
		print: func(in *Instruction) (string, bool) { return windowText(in.Attrs.Window), len(in.Attrs.Window) > 0 },
		parse: func(p *parser, in *Instruction) (err error) { in.Attrs.Window, err = p.parseWindow(); return },
	},
	"dim_labels": {
		print: func(in *Instruction) (string, bool) {
			if in.Attrs.Conv == nil {
				return "", false
			}
			return dimLabelsText(in.Attrs.Conv), true
		},
		parse: func(p *parser, in *Instruction) (err error) { in.Attrs.Conv, err = p.parseDimLabels(); return },
	},
	"feature_group_count": intCodec(func(a *Attributes) *int64 { return &a.FeatureGroupCount }, notOne),
	"batch_group_count":   intCodec(func(a *Attributes) *int64 { return &a.BatchGroupCount }, notOne),
	"direction": {
		print: func(in *Instruction) (string, bool) { return in.Attrs.Direction.String(), true },
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.Direction, err = ParseComparisonDirection(s); return })
		},
	},
	"kind": {
		print: func(in *Instruction) (string, bool) { return in.Attrs.FusionKind.String(), true },
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.FusionKind, err = ParseFusionKind(s); return })
		},
	},
	"type": {
		print: func(in *Instruction) (string, bool) {
			return in.Attrs.CompareType.String(), in.Attrs.CompareType != CompareDefault
		},
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.CompareType, err = ParseCompareType(s); return })
		},
	},
	"dynamic_slice_sizes": intListCodec(func(a *Attributes) *[]int64 { return &a.SliceSizes }, anyList),
	"slice_sizes":         intListCodec(func(a *Attributes) *[]int64 { return &a.SliceSizes }, anyList),
	"is_stable":           boolCodec(func(a *Attributes) *bool { return &a.IsStable }),

	"lhs_batch_dims":       intListCodec(func(a *Attributes) *[]int64 { return &dotDims(a).LhsBatch }, nonEmpty),
	"lhs_contracting_dims": intListCodec(func(a *Attributes) *[]int64 { return &dotDims(a).LhsContracting }, anyList),
	"rhs_batch_dims":       intListCodec(func(a *Attributes) *[]int64 { return &dotDims(a).RhsBatch }, nonEmpty),
	"rhs_contracting_dims": intListCodec(func(a *Attributes) *[]int64 { return &dotDims(a).RhsContracting }, anyList),

	"offset_dims":                 intListCodec(func(a *Attributes) *[]int64 { return &gatherDims(a).OffsetDims }, anyList),
	"collapsed_slice_dims":        intListCodec(func(a *Attributes) *[]int64 { return &gatherDims(a).CollapsedSliceDims }, anyList),
	"start_index_map":             intListCodec(func(a *Attributes) *[]int64 { return &gatherDims(a).StartIndexMap }, anyList),
	"operand_batching_dims":       intListCodec(func(a *Attributes) *[]int64 { return &gatherDims(a).OperandBatchingDims }, nonEmpty),
	"start_indices_batching_dims": intListCodec(func(a *Attributes) *[]int64 { return &gatherDims(a).StartIndicesBatchingDims }, nonEmpty),

	"update_window_dims":            intListCodec(func(a *Attributes) *[]int64 { return &scatterDims(a).UpdateWindowDims }, anyList),
	"inserted_window_dims":          intListCodec(func(a *Attributes) *[]int64 { return &scatterDims(a).InsertedWindowDims }, anyList),
	"scatter_dims_to_operand_dims":  intListCodec(func(a *Attributes) *[]int64 { return &scatterDims(a).ScatterDimsToOperandDims }, anyList),
	"input_batching_dims":           intListCodec(func(a *Attributes) *[]int64 { return &scatterDims(a).InputBatchingDims }, nonEmpty),
	"scatter_indices_batching_dims": intListCodec(func(a *Attributes) *[]int64 { return &scatterDims(a).ScatterIndicesBatchingDims }, nonEmpty),
	"unique_indices":                boolCodec(func(a *Attributes) *bool { return &scatterDims(a).UniqueIndices }),
	"index_vector_dim":              indexVectorDimCodec(),
	"indices_are_sorted":            boolCodec(func(a *Attributes) *bool { return &scatterDims(a).IndicesAreSorted }),

	"to_apply":            calledCodec(0),
	"calls":               calledCodec(0),
	"condition":           calledCodec(0),
	"body":                calledCodec(1),
	"select":              calledCodec(0),
	"scatter":             calledCodec(1),
	"true_computation":    {print: never, parse: func(p *parser, in *Instruction) error { return p.parseCalled(in, 0) }},
	"false_computation":   {print: never, parse: func(p *parser, in *Instruction) error { return p.parseCalled(in, 1) }},
	"branch_computations": branchesCodec(),
}

// Print conditions for optional attributes.
func anyList([]int64) bool    { return true }
func anyInt(int64) bool       { return true }
func nonEmpty(x []int64) bool { return len(x) > 0 }
func notOne(v int64) bool     { return v != 0 && v != 1 }

func never(*Instruction) (string, bool) { return "", false }

// The dimension-number structs are allocated on first use, by the printer (reading a
// nil struct as all-empty) and by the parser (filling it).
func dotDims(a *Attributes) *DotDims {
	if a.Dot == nil {
		a.Dot = &DotDims{}
	}
	return a.Dot
}

func gatherDims(a *Attributes) *GatherDims {
	if a.Gather == nil {
		a.Gather = &GatherDims{}
	}
	return a.Gather
}

func scatterDims(a *Attributes) *ScatterDims {
	if a.Scatter == nil {
		a.Scatter = &ScatterDims{}
	}
	return a.Scatter
}

// readOnly returns a copy of the attributes for printing, so that the printer's
// lazily allocated dimension structs never modify the module being printed.
func readOnly(in *Instruction) *Attributes {
	a := in.Attrs
	return &a
}

func intListCodec(field func(*Attributes) *[]int64, show func([]int64) bool) attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			xs := *field(readOnly(in))
			return intList(xs), show(xs)
		},
		parse: func(p *parser, in *Instruction) (err error) {
			*field(&in.Attrs), err = p.parseIntList()
			return
		},
	}
}

func intCodec(field func(*Attributes) *int64, show func(int64) bool) attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			v := *field(readOnly(in))
			return fmt.Sprint(v), show(v)
		},
		parse: func(p *parser, in *Instruction) (err error) {
			*field(&in.Attrs), err = p.parseInt()
			return
		},
	}
}

// boolCodec prints a flag only when it is set (XLA's style: is_stable=true).
func boolCodec(field func(*Attributes) *bool) attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return "true", *field(readOnly(in)) },
		parse: func(p *parser, in *Instruction) (err error) {
			*field(&in.Attrs), err = p.parseBool()
			return
		},
	}
}

// index_vector_dim is gather's or scatter's, by opcode.
func indexVectorDimCodec() attrCodec {
	field := func(in *Instruction, a *Attributes) *int64 {
		if in.Op == OpGather {
			return &gatherDims(a).IndexVectorDim
		}
		return &scatterDims(a).IndexVectorDim
	}
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return fmt.Sprint(*field(in, readOnly(in))), true },
		parse: func(p *parser, in *Instruction) (err error) {
			*field(in, &in.Attrs), err = p.parseInt()
			return
		},
	}
}

// calledCodec is a computation attribute (to_apply=%add) in role slot i of Called.
func calledCodec(i int) attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) {
			if i >= len(in.Called) {
				return "", false
			}
			return computationRef(in.Called[i]), true
		},
		parse: func(p *parser, in *Instruction) error { return p.parseCalled(in, i) },
	}
}

func branchesCodec() attrCodec {
	return attrCodec{
		print: func(in *Instruction) (string, bool) { return computationList(in.Called), true },
		parse: func(p *parser, in *Instruction) error { return p.parseCalledList(in) },
	}
}
