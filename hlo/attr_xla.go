package hlo

import (
	"fmt"
	"slices"
	"strings"
)

// The attributes XLA's HLO text parser knows (xla/hlo/parser/hlo_parser.cc: the
// attributes every instruction takes, each opcode's own, the module header's and a
// computation's), and what vkxla does with each. The parser reads this table: an
// attribute that is not one of its opcode's own (opAttrs) is looked up here; an
// ignored one has its value read by XLA's grammar for it (an enum's name checked
// against the names XLA accepts) and dropped, a refused one is an error that names
// it and says why. The honoured enums' names are the very slices their codecs parse
// with. TestXLAAttributeTable walks every row and every enum name;
// docs/limits.md is written from it.

// attrTreatment is what vkxla does with an attribute XLA's parser accepts.
type attrTreatment uint8

// The treatments.
const (
	// Honoured attributes are read into the IR and change what runs (or are
	// kept and printed back).
	attrHonoured attrTreatment = iota
	// Ignored attributes are parsed, their values checked, and dropped: they
	// do not change the values a program computes on one vkxla device.
	attrIgnored
	// Refused attributes are an error naming the attribute.
	attrRefused
)

func (t attrTreatment) String() string {
	return [...]string{"honoured", "ignored", "refused"}[t]
}

// attrScope is where an attribute is written.
type attrScope uint8

const (
	onInstruction attrScope = iota
	onModule                // HloModule name, attr=value, …
	onComputation           // after a computation's closing brace
)

// xlaAttr is one row: an attribute of the XLA opcodes ops (nil: every instruction),
// or of the module header or a computation.
type xlaAttr struct {
	name      string
	scope     attrScope
	ops       []string
	treatment attrTreatment
	// reason says why an attribute is ignored or refused.
	reason string
	// values are an enum's names as XLA accepts them; fold: XLA matches them
	// regardless of case (it lower-cases both sides). refusedValues are names
	// XLA's parser reads that vkxla refuses, with the reason.
	values        []string
	fold          bool
	refusedValues map[string]string
	// read reads an ignored attribute's value (the lexer stands after '=').
	read func(p *parser, a *xlaAttr) error
	// keep reads an honoured attribute that is no opcode's own (opAttrs) into
	// the instruction.
	keep func(p *parser, in *Instruction) error
	// sample is a value as XLA prints it, for the table test (enums try every
	// name instead, written into the sample where it has %s).
	sample string
}

// The opcodes of XLA's attribute rows, by XLA's names (some are not vkxla opcodes:
// their instructions are refused at the opcode, before any attribute).
var (
	xlaTranscendentals = []string{"acos", "acosh", "asin", "asinh", "atanh", "exponential-minus-one",
		"log", "log-plus-one", "logistic", "sqrt", "cbrt", "rsqrt", "tanh", "erf", "sine", "sinh",
		"cosine", "cosh", "tan", "exponential"}
	xlaAllReduces    = []string{"all-reduce", "all-reduce-start", "reduce-scatter"}
	xlaAllGathers    = []string{"all-gather", "all-gather-start"}
	xlaGroupedColls  = concat(xlaAllReduces, xlaAllGathers, []string{"all-to-all", "ragged-all-to-all", "collective-broadcast"})
	xlaPermutes      = []string{"collective-permute", "collective-permute-start"}
	xlaDots          = []string{"dot", "ragged-dot", "scaled-dot"}
	xlaPrecisionOps  = concat(xlaDots, []string{"convolution", "custom-call"})
	xlaSendRecv      = []string{"send", "recv", "send-done", "recv-done"}
	xlaAsync         = []string{"async-start", "async-update", "async-done"}
	xlaBatchNorms    = []string{"batch-norm-training", "batch-norm-inference", "batch-norm-grad"}
	xlaWindowed      = []string{"reduce-window", "select-and-scatter", "convolution", "custom-call"}
	xlaConvLike      = []string{"convolution", "custom-call"}
	xlaDimensionsOps = concat([]string{"broadcast", "transpose", "reverse", "concatenate", "reduce", "sort",
		"all-to-all", "ragged-all-to-all", "map", "get-dimension-size", "set-dimension-size", "scan"},
		xlaAllGathers, []string{"reduce-scatter"})
	xlaToApplyOps = concat([]string{"reduce", "reduce-window", "scatter", "sort", "call", "map", "scan",
		"custom-call"}, xlaAllReduces)
)

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// The enum names XLA accepts (xla_data.proto, hlo.proto and their *ToString
// functions), where no vkxla Go enum holds them.
var (
	// PrecisionConfig.Precision, lower-cased as XLA prints it (PACKED_NIBBLE is
	// in XLA versions that have it).
	xlaPrecisions = []string{"default", "high", "highest", "packed_nibble"}
	// PrecisionConfig.Algorithm without its ALG_ prefix, lower-cased.
	xlaDotAlgorithms = []string{"unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum",
		"dot_f16_f16_f16", "dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32",
		"dot_bf16_bf16_f32_x3", "dot_bf16_bf16_f32_x6", "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32",
		"dot_tf32_tf32_f32_x3", "dot_f32_f32_f32", "dot_f64_f64_f64"}
	xlaConvKinds          = []string{"fprop", "wgrad", "dgrad", "unset"}
	xlaPaddingTypes       = []string{"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"}
	xlaCollectiveModes    = []string{"cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_id"}
	customCallAPIVersions = []string{"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
		"API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"}
	customCallSchedules = []string{"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"}
)

// Reasons shared by several rows.
const (
	oneDevice      = "vkxla runs one replica of one partition on one device"
	opNotSupported = "its opcode is not one vkxla runs: the instruction is refused at the opcode"
)

// xlaAttrs is the table. Rows of one name for different opcodes are looked up in
// order, so a specific row comes before a row for every instruction.
var xlaAttrs = []*xlaAttr{
	// Attributes of every instruction.
	{name: "backend_config", ops: []string{"custom-call"}, treatment: attrHonoured,
		reason: "kept as written (string, JSON or MLIR dictionary): custom-call targets read it"},
	{name: "backend_config", treatment: attrIgnored, read: readStringOrBraced, sample: `{"operation_queue_id":"0","wait_on_operation_queues":[]}`,
		reason: "backend tuning (GPU streams, known trip counts, fusion configs); it changes how XLA's backends run an op, not its value"},
	{name: "metadata", treatment: attrIgnored, read: readBraced, sample: `{op_type="aten__add" op_name="model/add" source_file="model.py" source_line=12}`,
		reason: "debug information (framework op, source file and line)"},
	{name: "frontend_attributes", treatment: attrIgnored, read: readBraced, sample: `{_xla_compute_type="host",_xla_stream_annotation="1"}`,
		reason: "framework hints to XLA's passes (offload, scheduling, composite names); they do not define values"},
	{name: "sharding", treatment: attrHonoured, keep: keepSharding, sample: "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
		reason: "kept on the instruction (Instruction.Sharding: replicated, maximal, tiled in the list and iota forms, last_tile_dim_replicate, tuples) and printed back; spmd.Partition partitions by it (docs/spmd.md); on one device every sharding of a value holds the same values. Read and dropped: manual, unknown, unreduced, last_tile_dims, shard_as/shard_like, metadata, and the named mesh and maximal_mesh forms"},
	{name: "statistics", treatment: attrIgnored, read: readBraced, sample: "{visualizing_index=1,stat-0=60.5}",
		reason: "statistics for XLA's graph renderer"},
	{name: "parameter_replication", treatment: attrIgnored, read: readBoolList, sample: "{false,true}",
		reason: "which parameter buffers are replicated across replicas; " + oneDevice},
	{name: "control-predecessors", treatment: attrIgnored, read: readNameList, sample: "{%SELF}",
		reason: "an order between instructions without data flow; vkxla's only host transfers are the MoveToHost/MoveToDevice copies of host offload, ordered by their data flow, and it has no infeed or outfeed whose order the edges could change"},
	{name: "origin", treatment: attrIgnored, read: readBraced, sample: `{{"x.1"}}`,
		reason: "the value's provenance in the program before XLA's passes (debugging)"},
	{name: "result_accuracy", ops: xlaTranscendentals, treatment: attrIgnored, read: readBraced, sample: "{mode=highest}",
		reason: "asks for a more accurate transcendental; vkxla has one implementation of each (error bounds in docs/codegen.md)"},

	// Opcodes' own attributes.
	{name: "iota_dimension", ops: []string{"iota"}, treatment: attrHonoured},
	{name: "k", ops: []string{"topk"}, treatment: attrHonoured},
	{name: "largest", ops: []string{"topk"}, treatment: attrHonoured},
	{name: "dimensions", ops: xlaDimensionsOps, treatment: attrHonoured},
	{name: "index", ops: []string{"get-tuple-element"}, treatment: attrHonoured},
	{name: "slice", ops: []string{"slice"}, treatment: attrHonoured},
	{name: "padding", ops: []string{"pad"}, treatment: attrHonoured},
	{name: "dynamic_slice_sizes", ops: []string{"dynamic-slice"}, treatment: attrHonoured},
	{name: "window", ops: xlaWindowed, treatment: attrHonoured},
	{name: "dim_labels", ops: xlaConvLike, treatment: attrHonoured},
	{name: "feature_group_count", ops: xlaConvLike, treatment: attrHonoured},
	{name: "batch_group_count", ops: xlaConvLike, treatment: attrHonoured},
	{name: "conv_kind", ops: []string{"convolution"}, treatment: attrIgnored, read: readEnum, values: xlaConvKinds,
		reason: "tells XLA's GPU backend which cuDNN kernel (forward, weight or data gradient) a convolution is; its value is fixed by the operands, window and dim_labels"},
	{name: "operand_precision", ops: xlaPrecisionOps, treatment: attrIgnored, read: readEnumList, values: xlaPrecisions, fold: true, sample: "{%s,%s}",
		reason: "permits a backend to compute in lower precision (bf16 passes); vkxla computes at one precision, f16/bf16 accumulated in f32 (docs/codegen.md)"},
	{name: "algorithm", ops: []string{"rng-bit-generator"}, treatment: attrHonoured, values: rngAlgorithmNames[:], fold: true},
	{name: "algorithm", ops: []string{"dot", "scaled-dot"}, treatment: attrIgnored, read: readEnum, values: xlaDotAlgorithms, fold: true,
		reason: "the dot algorithm a backend should use (operand rounding, number of passes); vkxla has one dot algorithm, f16/bf16 accumulated in f32"},
	{name: "precision_config", ops: xlaPrecisionOps, treatment: attrIgnored, read: readBraced, sample: "{highest,highest}",
		reason: "not a name XLA's current parser knows (it writes operand_precision); vkxla has always accepted it as a precision hint"},
	{name: "direction", ops: []string{"compare"}, treatment: attrHonoured, values: directionNames[:]},
	{name: "type", ops: []string{"compare"}, treatment: attrHonoured, values: compareTypeNames[1:]},
	{name: "kind", ops: []string{"fusion"}, treatment: attrHonoured, values: fusionKindNames[:]},
	{name: "calls", ops: []string{"fusion"}, treatment: attrHonoured},
	{name: "calls", ops: []string{"async-start", "async-update", "async-done"}, treatment: attrRefused, reason: opNotSupported},
	{name: "output_to_operand_aliasing", ops: []string{"custom-call"}, treatment: attrHonoured},
	{name: "output_to_operand_aliasing", ops: []string{"fusion"}, treatment: attrIgnored, read: readAliasing, sample: "{{}: (0, {})}",
		reason: "lets XLA write a fusion's result over an operand; vkxla's planner chooses its own buffer reuse (docs/planner.md)"},
	{name: "output_to_operand_aliasing", ops: []string{"async-start"}, treatment: attrRefused, reason: opNotSupported},
	{name: "to_apply", ops: xlaToApplyOps, treatment: attrHonoured},
	{name: "is_composite", ops: []string{"call"}, treatment: attrIgnored, read: readBool, sample: "true",
		reason: "marks a call as a composite op (named in frontend_attributes); vkxla runs its body, which defines it"},
	{name: "condition", ops: []string{"while"}, treatment: attrHonoured},
	{name: "body", ops: []string{"while"}, treatment: attrHonoured},
	{name: "select", ops: []string{"select-and-scatter"}, treatment: attrHonoured},
	{name: "scatter", ops: []string{"select-and-scatter"}, treatment: attrHonoured},
	{name: "true_computation", ops: []string{"conditional"}, treatment: attrHonoured},
	{name: "false_computation", ops: []string{"conditional"}, treatment: attrHonoured},
	{name: "branch_computations", ops: []string{"conditional"}, treatment: attrHonoured},
	{name: "replica_groups", ops: xlaGroupedColls, treatment: attrHonoured},
	{name: "channel_id", ops: concat(xlaGroupedColls, xlaPermutes), treatment: attrHonoured, sample: "1"},
	{name: "channel_id", ops: xlaSendRecv, treatment: attrRefused, reason: opNotSupported},
	{name: "use_global_device_ids", ops: concat(xlaAllReduces, xlaAllGathers), treatment: attrHonoured, sample: "true"},
	{name: "constrain_layout", ops: concat(xlaAllReduces, xlaAllGathers, []string{"all-to-all"}), treatment: attrIgnored, read: readBool, sample: "true",
		reason: "fixes the layouts of a collective's operands; vkxla's arrays are row-major"},
	{name: "mode", ops: xlaAllReduces, treatment: attrIgnored, read: readEnum, values: xlaCollectiveModes,
		reason: "how replica_groups name devices; XLA reads and drops it too, and derives the mode from channel_id and use_global_device_ids, as vkxla does (docs/replicas.md)"},
	{name: "source_target_pairs", ops: xlaPermutes, treatment: attrHonoured},
	{name: "slice_sizes", ops: []string{"gather"}, treatment: attrHonoured},
	{name: "slice_sizes", ops: xlaPermutes, treatment: attrRefused,
		reason: "it makes the combined four-operand collective-permute, which vkxla does not run"},
	{name: "custom_call_target", ops: []string{"custom-call"}, treatment: attrHonoured},
	{name: "api_version", ops: []string{"custom-call"}, treatment: attrHonoured, values: customCallAPIVersions, fold: true},
	{name: "schedule", ops: []string{"custom-call"}, treatment: attrHonoured, values: customCallSchedules, fold: true},
	{name: "custom_call_has_side_effect", ops: []string{"custom-call"}, treatment: attrHonoured},
	{name: "operand_layout_constraints", ops: []string{"custom-call"}, treatment: attrHonoured},
	{name: "called_computations", ops: []string{"custom-call"}, treatment: attrHonoured},
	{name: "padding_type", ops: []string{"custom-call"}, treatment: attrIgnored, read: readEnum, values: xlaPaddingTypes,
		reason: "TensorFlow's VALID/SAME padding of a convolution-like call; vkxla's targets take padding from window"},
	{name: "literal", ops: []string{"custom-call"}, treatment: attrRefused,
		reason: "a literal handed to the target; no vkxla target reads one, so dropping it could change the result"},
	{name: "lhs_batch_dims", ops: xlaDots, treatment: attrHonoured},
	{name: "lhs_contracting_dims", ops: xlaDots, treatment: attrHonoured},
	{name: "rhs_batch_dims", ops: xlaDots, treatment: attrHonoured},
	{name: "rhs_contracting_dims", ops: xlaDots, treatment: attrHonoured},
	{name: "lhs_ragged_dims", ops: []string{"ragged-dot"}, treatment: attrRefused, reason: opNotSupported},
	{name: "rhs_group_dims", ops: []string{"ragged-dot"}, treatment: attrRefused, reason: opNotSupported},
	{name: "offset_dims", ops: []string{"gather"}, treatment: attrHonoured},
	{name: "collapsed_slice_dims", ops: []string{"gather"}, treatment: attrHonoured},
	{name: "start_index_map", ops: []string{"gather"}, treatment: attrHonoured},
	{name: "operand_batching_dims", ops: []string{"gather"}, treatment: attrHonoured},
	{name: "start_indices_batching_dims", ops: []string{"gather"}, treatment: attrHonoured},
	{name: "index_vector_dim", ops: []string{"gather", "scatter"}, treatment: attrHonoured},
	{name: "indices_are_sorted", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "indices_are_sorted", ops: []string{"gather"}, treatment: attrIgnored, read: readBool, sample: "true",
		reason: "a promise that lets a backend search faster; a gather's value does not depend on it"},
	{name: "update_window_dims", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "inserted_window_dims", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "scatter_dims_to_operand_dims", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "input_batching_dims", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "scatter_indices_batching_dims", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "unique_indices", ops: []string{"scatter"}, treatment: attrHonoured},
	{name: "is_stable", ops: []string{"sort"}, treatment: attrHonoured},
	{name: "epsilon", ops: xlaBatchNorms, treatment: attrHonoured},
	{name: "feature_index", ops: xlaBatchNorms, treatment: attrHonoured},
	{name: "exponent_bits", ops: []string{"reduce-precision"}, treatment: attrHonoured},
	{name: "mantissa_bits", ops: []string{"reduce-precision"}, treatment: attrHonoured},
	{name: "distribution", ops: []string{"rng"}, treatment: attrHonoured, values: rngDistributionNames[:], fold: true,
		refusedValues: map[string]string{"rng_invalid": "the proto's unset value; it names no distribution"}},
	{name: "delta", ops: []string{"rng-get-and-update-state"}, treatment: attrHonoured},
	{name: "left_side", ops: []string{"triangular-solve"}, treatment: attrHonoured},
	{name: "lower", ops: []string{"triangular-solve", "cholesky"}, treatment: attrHonoured},
	{name: "unit_diagonal", ops: []string{"triangular-solve"}, treatment: attrHonoured},
	{name: "transpose_a", ops: []string{"triangular-solve"}, treatment: attrHonoured, values: transposeKindNames[:],
		refusedValues: map[string]string{"TRANSPOSE_INVALID": "the proto's unset value; XLA's shape inference refuses it too"}},
	{name: "inferred_dimension", ops: []string{"reshape"}, treatment: attrIgnored, read: readInt, sample: "0",
		reason: "which dimension a frontend inferred from -1; the declared shape already gives it"},
	{name: "cross_program_prefetch_index", ops: []string{"copy-start"}, treatment: attrRefused, reason: opNotSupported},
	{name: "is_cross_program_prefetch", ops: []string{"copy-start"}, treatment: attrRefused, reason: opNotSupported},
	{name: "async_execution_thread", ops: xlaAsync, treatment: attrRefused, reason: opNotSupported},
	{name: "fft_type", ops: []string{"fft"}, treatment: attrHonoured, values: fftTypeNames[:]},
	{name: "fft_length", ops: []string{"fft"}, treatment: attrHonoured},
	{name: "infeed_config", ops: []string{"infeed"}, treatment: attrRefused, reason: opNotSupported},
	{name: "outfeed_config", ops: []string{"outfeed"}, treatment: attrRefused, reason: opNotSupported},
	{name: "outfeed_shape", ops: []string{"outfeed"}, treatment: attrRefused, reason: opNotSupported},
	{name: "is_host_transfer", ops: xlaSendRecv, treatment: attrRefused, reason: opNotSupported},
	{name: "domain", ops: []string{"domain"}, treatment: attrRefused, reason: opNotSupported},
	{name: "num_carries", ops: []string{"scan"}, treatment: attrRefused, reason: opNotSupported},
	{name: "is_reverse", ops: []string{"scan"}, treatment: attrRefused, reason: opNotSupported},
	{name: "is_associative", ops: []string{"scan"}, treatment: attrRefused, reason: opNotSupported},

	// The module header (HloModule name, attr=value, …).
	{name: "input_output_alias", scope: onModule, treatment: attrHonoured},
	{name: "entry_computation_layout", scope: onModule, treatment: attrIgnored, read: readBraced,
		sample: "{(f32[2,3]{1,0}, s32[]{:T(128)S(1)})->f32[2,3]{0,1:T(8,128)(2,1)}}",
		reason: "the physical layouts of the entry's parameters and result; vkxla exchanges arrays row-major, and a layout does not change their values"},
	{name: "is_scheduled", scope: onModule, treatment: attrIgnored, read: readBool, sample: "true",
		reason: "says the instruction order is a schedule; vkxla schedules itself (docs/planner.md)"},
	{name: "replica_count", scope: onModule, treatment: attrIgnored, read: readInt, sample: "1",
		reason: "the caller gives the device count (vkxla.CompileReplicated, cpuref.EvalReplicas); one-device compiles refuse collectives naming other replicas"},
	{name: "num_partitions", scope: onModule, treatment: attrIgnored, read: readInt, sample: "1",
		reason: "the caller lays the devices out (vkxla.WithPartitions, cpuref.EvalReplicas); shardings are ignored: vkxla runs SPMD programs already partitioned"},
	{name: "buffer_donor", scope: onModule, treatment: attrIgnored, read: readBraced, sample: "{(0, {}), (1, {})}",
		reason: "parameters the caller lets XLA overwrite; vkxla's planner reuses only input_output_alias buffers"},
	{name: "alias_passthrough_params", scope: onModule, treatment: attrIgnored, read: readBool, sample: "true",
		reason: "lets XLA alias parameters passed through to the result; a buffer-reuse choice"},
	{name: "frontend_attributes", scope: onModule, treatment: attrIgnored, read: readBraced, sample: `{fingerprint_before_lhs="3c2a"}`,
		reason: "framework hints to XLA's passes"},
	{name: "allow_spmd_sharding_propagation_to_parameters", scope: onModule, treatment: attrIgnored, read: readBoolOrList, sample: "{false,true}",
		reason: "SPMD partitioner option; " + oneDevice},
	{name: "allow_spmd_sharding_propagation_to_output", scope: onModule, treatment: attrIgnored, read: readBoolOrList, sample: "{true}",
		reason: "SPMD partitioner option; " + oneDevice},
	{name: "origin_recovery_table", scope: onModule, treatment: attrIgnored, read: readBraced, sample: `{{"a"}: {"b"}}`,
		reason: "how to recover values of the original program (debugging)"},

	// A computation's attributes (after its closing brace).
	{name: "execution_thread", scope: onComputation, treatment: attrIgnored, read: readString, sample: `"main"`,
		reason: "the thread an async computation runs on; vkxla runs every computation on the device (async ops are refused at the opcode)"},
}

// lookupXLAAttr finds the row of an attribute written on an instruction of opcode
// op (XLA's name), or at scope; ok is false when XLA gives the attribute to no such
// place.
func lookupXLAAttr(name string, scope attrScope, op string) (*xlaAttr, bool) {
	for _, a := range xlaAttrs {
		if a.name == name && a.scope == scope && (a.ops == nil || slices.Contains(a.ops, op)) {
			return a, true
		}
	}
	return nil, false
}

// xlaAttrOps lists the opcodes XLA gives an instruction attribute to, for errors.
func xlaAttrOps(name string) []string {
	var ops []string
	for _, a := range xlaAttrs {
		if a.name == name && a.scope == onInstruction {
			if a.ops == nil {
				return []string{"every instruction"}
			}
			ops = append(ops, a.ops...)
		}
	}
	return ops
}

// readXLAAttr reads the value of a row's attribute, or refuses it; at is the
// attribute name's token.
func (p *parser) readXLAAttr(a *xlaAttr, at token, where string) error {
	switch a.treatment {
	case attrIgnored:
		return a.read(p, a)
	case attrRefused:
		return p.errorAt(at.pos, "attribute %s of %s is not supported: %s", a.name, where, a.reason)
	}
	// An honoured row that is not the opcode's own: the table and opAttrs
	// disagree (TestXLAAttributeTable keeps them in step).
	return p.errorAt(at.pos, "%s: attribute %s of %s has no reader", internalParserError, a.name, where)
}

// matchEnum returns the index of s among an enum's names, or -1.
func matchEnum(names []string, s string, fold bool) int {
	for i, n := range names {
		if n == s || (fold && strings.EqualFold(n, s)) {
			return i
		}
	}
	return -1
}

// enumError says that s is not one of the names of attribute attr.
func enumError(attr, s string, names []string) error {
	return fmt.Errorf("unknown %s %q (want one of %s)", attr, s, strings.Join(names, ", "))
}

// The value readers of ignored attributes: each reads XLA's grammar for the
// value and drops it.

func readEnum(p *parser, a *xlaAttr) error {
	return p.parseEnum(func(s string) error {
		if matchEnum(a.values, s, a.fold) < 0 {
			return enumError(a.name, s, a.values)
		}
		return nil
	})
}

func readEnumList(p *parser, a *xlaAttr) error {
	_, err := parseBracedList(p, a.name+" names", func() (struct{}, error) { return struct{}{}, readEnum(p, a) })
	return err
}

func readBool(p *parser, _ *xlaAttr) error { _, err := p.parseBool(); return err }
func readInt(p *parser, _ *xlaAttr) error  { _, err := p.parseInt(); return err }

func readString(p *parser, a *xlaAttr) error { _, err := p.parseString(a.name); return err }

func readBoolList(p *parser, a *xlaAttr) error {
	_, err := parseBracedList(p, a.name+" booleans", p.parseBool)
	return err
}

// readBoolOrList reads true, false or a braced list of them.
func readBoolOrList(p *parser, a *xlaAttr) error {
	if p.peek().text == "{" {
		return readBoolList(p, a)
	}
	return readBool(p, a)
}

// readNameList reads {%a, %b}: instructions of the computation being read, which
// must exist (resolveComputation checks them once the computation is read).
func readNameList(p *parser, a *xlaAttr) error {
	_, err := parseBracedList(p, a.name+" names", func() (string, error) {
		t := p.next()
		if t.kind != tokName {
			return "", p.errorAt(t.pos, "expected an instruction name in %s, found %s", a.name, t.describe())
		}
		p.current.named = append(p.current.named, operandRef{name: strings.TrimPrefix(t.text, "%"), pos: t.pos})
		return t.text, nil
	})
	return err
}

// readBraced reads a balanced {…} value (sharding, metadata, frontend attributes
// and the like: nested groups and quoted strings).
func readBraced(p *parser, a *xlaAttr) error {
	if t := p.peek(); t.text != "{" {
		return p.errorAt(t.pos, "expected '{' to open the value of %s, found %s", a.name, t.describe())
	}
	return p.skipValue(a.name)
}

// readStringOrBraced reads a quoted string or a balanced {…} (XLA's
// string-or-JSON-dictionary values).
func readStringOrBraced(p *parser, a *xlaAttr) error {
	if p.peek().kind == tokString {
		return readString(p, a)
	}
	return readBraced(p, a)
}

func readAliasing(p *parser, _ *xlaAttr) error {
	_, err := p.parseAliasList()
	return err
}

// shardingKeywords are the words of a single sharding that stand alone (XLA's
// sharding keywords), and shardingTypes the names a last_tile_dims list takes.
var (
	shardingKeywords = []string{"replicated", "maximal", "manual", "unknown", "unreduced", "last_tile_dim_replicate"}
	shardingTypes    = []string{"replicated", "maximal", "manual", "unreduced"}
)

// keepSharding reads a sharding into in.Sharding (nil for a form vkxla drops).
func keepSharding(p *parser, in *Instruction) error {
	s, err := readSharding(p)
	in.Sharding = s
	return err
}

// readSharding reads XLA's sharding grammar: a single sharding {…}, or a tuple
// sharding {{…}, {…}} (empty: {}). Named shardings over a mesh ({mesh[…], …}) are
// read as a balanced group and dropped, as is a tuple with a dropped element.
func readSharding(p *parser) (*Sharding, error) {
	if t := p.peek(); t.text != "{" {
		return nil, p.errorAt(t.pos, "expected '{' to open the value of sharding, found %s", t.describe())
	}
	start := p.pos
	p.next()
	first := p.peek()
	p.pos = start
	switch {
	case first.text == "{" || first.text == "}":
		elems, err := parseBracedList(p, "tuple shardings", p.readSingleSharding)
		if err != nil || slices.Contains(elems, nil) {
			return nil, err
		}
		return TupleSharding(elems...), nil
	case first.kind == tokName && (first.text == "mesh" || first.text == "maximal_mesh"):
		return nil, p.skipValue("sharding")
	}
	return p.readSingleSharding()
}

// readSingleSharding reads {keyword… device=n devices=[dims]ids metadata={…}
// last_tile_dims={types} shard_as n shard_like n}, the ids a list or the iota form
// <=[dims]T(perm). It returns nil for the forms vkxla drops.
func (p *parser) readSingleSharding() (*Sharding, error) {
	if err := p.expect("{", "to open a sharding"); err != nil {
		return nil, err
	}
	var sh shardingText
	for !p.accept("}") {
		t := p.next()
		if t.kind != tokName {
			return nil, p.errorAt(t.pos, "expected a sharding keyword, device=, devices=, metadata= or last_tile_dims=, found %s", t.describe())
		}
		if err := p.readShardingPart(t, &sh); err != nil {
			return nil, err
		}
	}
	return sh.sharding(), nil
}

// shardingText collects the parts of one sharding as read.
type shardingText struct {
	keywords []string
	device   int64
	tiled    *Sharding
	dropped  bool // last_tile_dims, shard_as, shard_like
}

func (sh *shardingText) sharding() *Sharding {
	has := func(k string) bool { return slices.Contains(sh.keywords, k) }
	switch {
	case sh.dropped || has("manual") || has("unknown") || has("unreduced"):
		return nil
	case has("replicated"):
		return Replicated()
	case has("maximal"):
		return Maximal(sh.device)
	case sh.tiled != nil:
		sh.tiled.ReplicateLast = has("last_tile_dim_replicate")
		return sh.tiled
	}
	return nil
}

func (p *parser) readShardingPart(t token, sh *shardingText) error {
	switch t.text {
	case "device", "devices", "metadata", "last_tile_dims":
		if err := p.expect("=", "after "+t.text+" in a sharding"); err != nil {
			return err
		}
	}
	var err error
	switch t.text {
	case "device":
		sh.device, err = p.parseInt()
	case "shard_as", "shard_like":
		sh.dropped = true
		_, err = p.parseInt()
	case "devices":
		sh.tiled, err = p.readTileAssignment()
	case "metadata":
		err = readBraced(p, &xlaAttr{name: "metadata"})
	case "last_tile_dims":
		sh.dropped = true
		_, err = parseBracedList(p, "sharding types", func() (struct{}, error) {
			return struct{}{}, readEnum(p, &xlaAttr{name: "last_tile_dims", values: shardingTypes})
		})
	default:
		if !slices.Contains(shardingKeywords, t.text) {
			err = p.errorAt(t.pos, "unknown sharding keyword %q (want %s, device=, devices=, metadata=, last_tile_dims=, shard_as or shard_like)",
				t.text, strings.Join(shardingKeywords, ", "))
		}
		sh.keywords = append(sh.keywords, t.text)
	}
	return err
}

// readTileAssignment reads [dims] then the device ids: n,n,… or <=[dims]T(perm).
func (p *parser) readTileAssignment() (*Sharding, error) {
	start := p.peek().pos
	tiles, err := p.parseBracketInts()
	if err != nil {
		return nil, err
	}
	n := int64(1)
	for _, d := range tiles {
		if d < 1 || n*d > maxIotaReplicas {
			return nil, p.errorAt(start, "tile assignment dims %v are not positive or exceed %d devices", tiles, maxIotaReplicas)
		}
		n *= d
	}
	s := &Sharding{Kind: ShardTiled, TileDims: tiles}
	if t := p.peek(); t.text == "<" {
		p.next()
		if err := p.expect("=", "in '<=' of an iota tile assignment"); err != nil {
			return nil, err
		}
		dims, perm, err := p.parseIotaDevices()
		if err != nil {
			return nil, err
		}
		groups, err := iotaGroups([]int64{1, n}, dims, perm)
		if err != nil {
			return nil, p.errorAt(start, "iota tile assignment: %v", err)
		}
		s.Devices, s.IotaDims, s.IotaPerm = groups[0], dims, perm
		return s, nil
	}
	for {
		id, err := p.parseInt()
		if err != nil {
			return nil, err
		}
		s.Devices = append(s.Devices, id)
		if !p.accept(",") {
			break
		}
	}
	if int64(len(s.Devices)) != n {
		return nil, p.errorAt(start, "tile assignment [%s] lists %d devices, not %d", joinInts(tiles, ","), len(s.Devices), n)
	}
	return s, nil
}
