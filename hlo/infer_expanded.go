package hlo

import (
	"errors"
	"fmt"
	"slices"
)

// Shape rules of the ops expander passes rewrite before code generation, following
// XLA's operation semantics.

func init() {
	for op, rule := range map[Opcode]shapeRule{
		OpBatchNormTraining: inferBatchNormTraining, OpBatchNormInference: inferBatchNormInference,
		OpBatchNormGrad: inferBatchNormGrad, OpRngBitGenerator: inferRngBitGenerator,
		OpCustomCall: inferCustomCall,
		OpAllReduce:  inferAllReduce, OpAllReduceStart: inferAllReduce, OpAllReduceDone: inferAllReduceDone,
		OpAllGather: inferAllGather, OpAllGatherStart: inferAllGatherStart, OpAllGatherDone: inferAsyncDone,
		OpReduceScatter: inferReduceScatter, OpAllToAll: inferAllToAll,
		OpCollectivePermute: inferCollectivePermute, OpCollectivePermuteStart: inferCollectivePermuteStart,
		OpCollectivePermuteDone: inferAsyncDone,
		OpReplicaID:             inferDeviceID, OpPartitionID: inferDeviceID,
		OpCollectiveBroadcast: inferCollectiveBroadcast,
	} {
		shapeRules[op] = rule
	}
}

// batchNormChannels checks the operand and feature_index and returns the shape of
// one value per feature, f[C].
func batchNormChannels(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x := a.operands[0]
	if !x.DType.IsFloat() {
		return Shape{}, fmt.Errorf("operand %v is not floating-point", x)
	}
	if err := checkDim("feature_index", a.attrs.FeatureIndex, x.Rank()); err != nil {
		return Shape{}, err
	}
	if eps := a.attrs.Epsilon; !(eps >= 0) {
		return Shape{}, fmt.Errorf("epsilon %v is negative or NaN", eps)
	}
	return MakeShape(x.DType, x.Dims[a.attrs.FeatureIndex]), nil
}

// checkOperandShapes checks the operands from index first on, named by names,
// against want, in order (so the error names the first that differs).
func checkOperandShapes(a *shapeArgs, want Shape, first int, names ...string) error {
	for k, name := range names {
		i := first + k
		if !a.operands[i].Equal(want) {
			return fmt.Errorf("%s (operand %d) is %v, want %v", name, i, a.operands[i], want)
		}
	}
	return nil
}

func inferBatchNormTraining(a *shapeArgs) (Shape, error) {
	c, err := batchNormChannels(a)
	if err == nil {
		err = checkOperandShapes(a, c, 1, "scale", "offset")
	}
	return MakeTuple(a.operands[0], c, c).Clone(), err
}

func inferBatchNormInference(a *shapeArgs) (Shape, error) {
	c, err := batchNormChannels(a)
	if err == nil {
		err = checkOperandShapes(a, c, 1, "scale", "offset", "mean", "variance")
	}
	return a.operands[0].Clone(), err
}

func inferBatchNormGrad(a *shapeArgs) (Shape, error) {
	c, err := batchNormChannels(a)
	if err == nil {
		err = checkOperandShapes(a, c, 1, "scale", "mean", "variance")
	}
	if err == nil {
		err = checkOperandShapes(a, a.operands[0], 4, "grad_output")
	}
	return MakeTuple(a.operands[0], c, c).Clone(), err
}

// RngOutputTypes are the element types rng-bit-generator produces.
var RngOutputTypes = []DType{U32, U64, S32, S64}

// inferRngBitGenerator: the state is u64[2] (three_fry, philox) or u64[3] (philox);
// the declared result is (state, bits) with bits of any shape of an RngOutputTypes
// type.
func inferRngBitGenerator(a *shapeArgs) (Shape, error) {
	if a.declared == nil {
		return Shape{}, ErrDeclaredShape
	}
	state, d := a.operands[0], *a.declared
	alg := a.attrs.RngAlgorithm.Effective()
	if alg > RngPhilox {
		return Shape{}, fmt.Errorf("unknown algorithm %v", a.attrs.RngAlgorithm)
	}
	philox3 := alg == RngPhilox && state.Equal(MakeShape(U64, 3))
	if !state.Equal(MakeShape(U64, 2)) && !philox3 {
		return Shape{}, fmt.Errorf("state %v: want u64[2] (or u64[3] for rng_philox and rng_default)", state)
	}
	if !d.IsTuple() || len(d.Elems) != 2 || !d.Elems[1].IsArray() {
		return Shape{}, fmt.Errorf("declared shape %v is not (state, bits)", d)
	}
	bits := d.Elems[1]
	if !slices.Contains(RngOutputTypes, bits.DType) {
		return Shape{}, fmt.Errorf("bits %v: want one of %v", bits, RngOutputTypes)
	}
	return MakeTuple(state, bits).Clone(), nil
}

// inferCustomCall: the result is declared; the operand layout constraints, if
// given, name one shape per operand with its dimensions, and the aliasing entries
// name operands that exist. What a target accepts is its registry entry's to check.
func inferCustomCall(a *shapeArgs) (Shape, error) {
	if a.declared == nil {
		return Shape{}, ErrDeclaredShape
	}
	c := a.attrs.CustomCall
	if c == nil || c.Target == "" {
		return Shape{}, errors.New("has no custom_call_target")
	}
	if lc := c.OperandLayoutConstraints; lc != nil {
		if len(lc) != len(a.operands) {
			return Shape{}, fmt.Errorf("operand_layout_constraints lists %d shapes for %d operands", len(lc), len(a.operands))
		}
		for i, s := range lc {
			if !s.Equal(a.operands[i]) {
				return Shape{}, fmt.Errorf("operand_layout_constraints gives operand %d shape %v, it has %v", i, s, a.operands[i])
			}
		}
	}
	for _, al := range c.OutputToOperandAliasing {
		if al.Operand < 0 || al.Operand >= int64(len(a.operands)) {
			return Shape{}, fmt.Errorf("output_to_operand_aliasing names operand %d of %d", al.Operand, len(a.operands))
		}
		out, okOut := subshape(*a.declared, al.Output)
		in, okIn := subshape(a.operands[al.Operand], al.OperandIndex)
		if !okOut || !okIn || !out.Equal(in) {
			return Shape{}, fmt.Errorf("output_to_operand_aliasing aliases output %s with operand %d %s, whose shapes differ",
				intList(al.Output), al.Operand, intList(al.OperandIndex))
		}
	}
	return a.declared.Clone(), nil
}

// groupSize is the number of replicas in each replica group: one when the groups
// are {} (every replica of a one-device run). Groups of unequal size are an error.
func groupSize(groups [][]int64) (int64, error) {
	if len(groups) == 0 {
		return 1, nil
	}
	n := len(groups[0])
	for _, g := range groups {
		if len(g) != n || n == 0 {
			return 0, fmt.Errorf("replica_groups %s are empty or of unequal sizes", replicaGroupsText(groups))
		}
	}
	return int64(n), nil
}

// checkGroups rejects empty replica groups. Groups of unequal sizes are valid
// where the result's shape does not depend on the size (all-reduce,
// collective-broadcast), as in XLA.
func checkGroups(groups [][]int64) error {
	for _, g := range groups {
		if len(g) == 0 {
			return fmt.Errorf("replica_groups %s has an empty group", replicaGroupsText(groups))
		}
	}
	return nil
}

// collectiveResult is one result per operand: a tuple for several, the array for one.
func collectiveResult(results []Shape) Shape {
	if len(results) == 1 {
		return results[0].Clone()
	}
	return MakeTuple(results...).Clone()
}

// perOperand applies f to each operand (arrays, at least one).
func perOperand(a *shapeArgs, f func(x Shape) (Shape, error)) ([]Shape, error) {
	if len(a.operands) == 0 {
		return nil, errors.New("needs at least one operand")
	}
	if err := needArrays(a); err != nil {
		return nil, err
	}
	out := make([]Shape, len(a.operands))
	for i, x := range a.operands {
		s, err := f(x)
		if err != nil {
			return nil, fmt.Errorf("operand %d: %w", i, err)
		}
		out[i] = s
	}
	return out, nil
}

func inferAllReduce(a *shapeArgs) (Shape, error) {
	if err := checkGroups(a.attrs.ReplicaGroups); err != nil {
		return Shape{}, err
	}
	results, err := perOperand(a, func(x Shape) (Shape, error) { return x, checkReducer("to_apply", a.called[0], []DType{x.DType}) })
	if err != nil {
		return Shape{}, err
	}
	return collectiveResult(results), nil
}

// inferCollectiveBroadcast: each operand's shape (every member receives the
// group's first member's operands).
func inferCollectiveBroadcast(a *shapeArgs) (Shape, error) {
	if err := checkGroups(a.attrs.ReplicaGroups); err != nil {
		return Shape{}, err
	}
	results, err := perOperand(a, func(x Shape) (Shape, error) { return x, nil })
	if err != nil {
		return Shape{}, err
	}
	return collectiveResult(results), nil
}

func inferAllReduceDone(a *shapeArgs) (Shape, error) { return a.operands[0].Clone(), nil }

// gatherDim returns the collective's one dimension attribute, checked against x.
func gatherDim(a *shapeArgs, x Shape) (int64, error) {
	if len(a.attrs.Dimensions) != 1 {
		return 0, fmt.Errorf("dimensions=%s: want one dimension", intList(a.attrs.Dimensions))
	}
	d := a.attrs.Dimensions[0]
	return d, checkDim("dimension", d, x.Rank())
}

func allGatherResults(a *shapeArgs) ([]Shape, error) {
	g, err := groupSize(a.attrs.ReplicaGroups)
	if err != nil {
		return nil, err
	}
	return perOperand(a, func(x Shape) (Shape, error) {
		d, err := gatherDim(a, x)
		if err != nil {
			return Shape{}, err
		}
		out := x.Clone()
		out.Dims[d] *= g
		return out, validShape(out)
	})
}

func inferAllGather(a *shapeArgs) (Shape, error) {
	results, err := allGatherResults(a)
	if err != nil {
		return Shape{}, err
	}
	return collectiveResult(results), nil
}

// inferAllGatherStart: (operands, results), each an array or a tuple as for
// all-gather.
func inferAllGatherStart(a *shapeArgs) (Shape, error) {
	results, err := allGatherResults(a)
	if err != nil {
		return Shape{}, err
	}
	return MakeTuple(collectiveResult(a.operands), collectiveResult(results)).Clone(), nil
}

// inferAsyncDone: an async -done takes its -start's tuple and yields element 1.
func inferAsyncDone(a *shapeArgs) (Shape, error) {
	t := a.operands[0]
	if !t.IsTuple() || len(t.Elems) < 2 {
		return Shape{}, fmt.Errorf("operand %v is not a -start tuple (operand, result, …)", t)
	}
	return t.Elems[1].Clone(), nil
}

func inferReduceScatter(a *shapeArgs) (Shape, error) {
	g, err := groupSize(a.attrs.ReplicaGroups)
	if err != nil {
		return Shape{}, err
	}
	results, err := perOperand(a, func(x Shape) (Shape, error) {
		d, err := gatherDim(a, x)
		if err == nil {
			err = checkReducer("to_apply", a.called[0], []DType{x.DType})
		}
		if err != nil {
			return Shape{}, err
		}
		if x.Dims[d]%g != 0 {
			return Shape{}, fmt.Errorf("dimension %d of size %d does not split into %d replicas", d, x.Dims[d], g)
		}
		out := x.Clone()
		out.Dims[d] /= g
		return out, nil
	})
	if err != nil {
		return Shape{}, err
	}
	return collectiveResult(results), nil
}

// inferAllToAll: the result has the operands' shapes; with dimensions={d} (one
// array operand) dimension d must split into the group's replicas.
func inferAllToAll(a *shapeArgs) (Shape, error) {
	g, err := groupSize(a.attrs.ReplicaGroups)
	if err != nil {
		return Shape{}, err
	}
	results, err := perOperand(a, func(x Shape) (Shape, error) {
		if len(a.attrs.Dimensions) == 0 {
			return x, nil
		}
		d, err := gatherDim(a, x)
		if err == nil && x.Dims[d]%g != 0 {
			err = fmt.Errorf("dimension %d of size %d does not split into %d replicas", d, x.Dims[d], g)
		}
		return x, err
	})
	if err != nil {
		return Shape{}, err
	}
	return collectiveResult(results), nil
}

func checkPairs(pairs [][]int64) error {
	for _, p := range pairs {
		if len(p) != 2 || p[0] < 0 || p[1] < 0 {
			return fmt.Errorf("source_target_pairs %s: want {source,target} pairs of replica ids", replicaGroupsText(pairs))
		}
	}
	return nil
}

func inferCollectivePermute(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	return a.operands[0].Clone(), checkPairs(a.attrs.SourceTargetPairs)
}

// inferCollectivePermuteStart: (operand, result); XLA's older form with two u32[]
// context elements, (operand, result, u32[], u32[]), is accepted when declared.
func inferCollectivePermuteStart(a *shapeArgs) (Shape, error) {
	x, err := inferCollectivePermute(a)
	if err != nil {
		return Shape{}, err
	}
	short := MakeTuple(x, x).Clone()
	long := MakeTuple(x, x, Scalar(U32), Scalar(U32)).Clone()
	if a.declared != nil && a.declared.Equal(long) {
		return long, nil
	}
	return short, nil
}

func inferDeviceID(*shapeArgs) (Shape, error) { return Scalar(U32), nil }

// subshape is the element of s at a tuple index path.
func subshape(s Shape, path []int64) (Shape, bool) {
	for _, i := range path {
		if !s.IsTuple() || i < 0 || i >= int64(len(s.Elems)) {
			return Shape{}, false
		}
		s = s.Elems[i]
	}
	return s, true
}
