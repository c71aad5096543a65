package hlo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrintParseBuilderModules: print → parse → print is the identity on the builder's
// module for every opcode (the builder's conventions, such as unset group counts, must
// survive the text form), and the parsed module verifies.
func TestPrintParseBuilderModules(t *testing.T) {
	for _, op := range AllOpcodes() {
		t.Run(op.String(), func(t *testing.T) {
			printed := Print(sampleModule(t, op))
			m, err := ParseModule(printed)
			require.NoError(t, err, printed)
			assert.Equal(t, printed, Print(m))
		})
	}
}

// TestPrintParseRandomModules: print → parse → print is the identity on randomly
// generated modules. The generator covers every opcode with random attributes,
// element types and literal values (NaN, infinities, -0, subnormals, extreme
// integers), so its modules are well-formed but not shape-correct; they go through
// ParseModuleUnverified.
func TestPrintParseRandomModules(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		m := randomModule(rng, fmt.Sprintf("random_%d", i))
		printed := Print(m)
		parsed, err := ParseModuleUnverified(printed)
		require.NoError(t, err, printed)
		if !assert.Equal(t, printed, Print(parsed), "module %d", i) {
			return
		}
	}
}

// randomModule builds one to three callee computations and an entry calling them.
func randomModule(rng *rand.Rand, name string) *Module {
	g := &moduleGen{rng: rng}
	m := &Module{Name: name}
	for i := range 1 + rng.IntN(3) {
		m.Computations = append(m.Computations, g.computation(fmt.Sprintf("comp.%d", i), m.Computations))
	}
	m.Entry = g.computation("main", m.Computations)
	m.Computations = append(m.Computations, m.Entry)
	return m
}

type moduleGen struct {
	rng   *rand.Rand
	names int
}

// name makes module-unique names in XLA's spellings (dots and hyphens included).
func (g *moduleGen) name(base string) string {
	g.names++
	return fmt.Sprintf("%s.%d", base, g.names)
}

func (g *moduleGen) computation(name string, callees []*Computation) *Computation {
	c := &Computation{Name: name}
	for i := range g.rng.IntN(3) {
		p := &Instruction{Name: g.name("param"), Op: OpParameter, Shape: g.shape(1), Attrs: Attributes{ParameterNumber: int64(i)}}
		c.Params = append(c.Params, p)
		c.Instructions = append(c.Instructions, p)
	}
	for range 1 + g.rng.IntN(6) {
		c.Instructions = append(c.Instructions, g.instruction(c.Instructions, callees))
	}
	c.Root = c.Instructions[g.rng.IntN(len(c.Instructions))]
	return c
}

func (g *moduleGen) instruction(defined []*Instruction, callees []*Computation) *Instruction {
	ops := AllOpcodes()[1:] // not parameter
	op := ops[g.rng.IntN(len(ops))]
	for len(op.Info().Called) > 0 && len(callees) == 0 || op.Info().Arity > 0 && len(defined) == 0 {
		op = ops[g.rng.IntN(len(ops))]
	}
	in := &Instruction{Name: g.name(op.String()), Op: op, Shape: g.shape(1)}
	if op == OpConstant {
		in.Attrs.Literal = g.literal(in.Shape)
	}
	arity := op.Info().Arity
	if arity == Variadic {
		arity = g.rng.IntN(4)
	}
	for range arity {
		if len(defined) > 0 {
			in.Operands = append(in.Operands, defined[g.rng.IntN(len(defined))])
		}
	}
	g.attributes(in)
	g.called(in, callees)
	return in
}

// shape is a random array shape, or at depth > 0 sometimes a tuple.
func (g *moduleGen) shape(depth int) Shape {
	if depth > 0 && g.rng.IntN(8) == 0 {
		elems := make([]Shape, g.rng.IntN(3))
		for i := range elems {
			elems[i] = g.shape(depth - 1)
		}
		return MakeTuple(elems...)
	}
	dims := make([]int64, g.rng.IntN(4))
	for i := range dims {
		dims[i] = int64(g.rng.IntN(4))
	}
	return MakeShape(AllDTypes[g.rng.IntN(len(AllDTypes))], dims...)
}

func (g *moduleGen) ints(n int) []int64 {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = int64(g.rng.IntN(9)) - 2
	}
	return xs
}

func (g *moduleGen) someInts() []int64 { return g.ints(g.rng.IntN(4)) }

// attributes fills every attribute the opcode prints with random values.
func (g *moduleGen) attributes(in *Instruction) {
	a := &in.Attrs
	switch in.Op {
	case OpIota:
		a.IotaDimension = int64(g.rng.IntN(3))
	case OpCompare:
		a.Direction = ComparisonDirection(g.rng.IntN(6))
		a.CompareType = CompareType(g.rng.IntN(5))
	case OpBroadcast, OpTranspose, OpReverse, OpConcatenate, OpReduce, OpSort:
		a.Dimensions = g.someInts()
		a.IsStable = in.Op == OpSort && g.rng.IntN(2) == 0
	case OpSlice:
		for range g.rng.IntN(3) {
			a.Slice = append(a.Slice, SliceDim{Start: int64(g.rng.IntN(3)), Limit: int64(g.rng.IntN(9)), Stride: int64(1 + g.rng.IntN(3))})
		}
	case OpPad:
		for range g.rng.IntN(3) {
			a.Padding = append(a.Padding, PadDim{Low: int64(g.rng.IntN(5)) - 2, High: int64(g.rng.IntN(5)) - 2, Interior: int64(g.rng.IntN(2))})
		}
	case OpDynamicSlice:
		a.SliceSizes = g.someInts()
	case OpGetTupleElement:
		a.TupleIndex = int64(g.rng.IntN(3))
	case OpReduceWindow, OpSelectAndScatter:
		a.Window = g.window()
	case OpConvolution:
		a.Window = g.window()
		a.Conv = g.convDims(len(a.Window))
		a.FeatureGroupCount, a.BatchGroupCount = int64(g.rng.IntN(4)), int64(g.rng.IntN(4))
	case OpDot:
		a.Dot = &DotDims{LhsBatch: g.someInts(), RhsBatch: g.someInts(), LhsContracting: g.someInts(), RhsContracting: g.someInts()}
	case OpGather:
		a.Gather = &GatherDims{OffsetDims: g.someInts(), CollapsedSliceDims: g.someInts(), StartIndexMap: g.someInts(),
			IndexVectorDim: int64(g.rng.IntN(3)), OperandBatchingDims: g.someInts(), StartIndicesBatchingDims: g.someInts()}
		a.SliceSizes = g.someInts()
	case OpScatter:
		a.Scatter = &ScatterDims{UpdateWindowDims: g.someInts(), InsertedWindowDims: g.someInts(),
			ScatterDimsToOperandDims: g.someInts(), IndexVectorDim: int64(g.rng.IntN(3)),
			InputBatchingDims: g.someInts(), ScatterIndicesBatchingDims: g.someInts(),
			IndicesAreSorted: g.rng.IntN(2) == 0, UniqueIndices: g.rng.IntN(2) == 0}
	default:
		g.expandedAttributes(in)
	}
}

// expandedAttributes fills the attributes of the ops expander passes lower.
func (g *moduleGen) expandedAttributes(in *Instruction) {
	a := &in.Attrs
	switch in.Info().ExpandedBy {
	case BatchNormExpander:
		a.Epsilon, a.FeatureIndex = g.rng.Float32(), int64(g.rng.IntN(3))
	case RngBitGeneratorExpander:
		a.RngAlgorithm = RngAlgorithm(g.rng.IntN(3))
	case CollectiveExpander:
		for range g.rng.IntN(3) {
			a.ReplicaGroups = append(a.ReplicaGroups, g.someInts())
			a.SourceTargetPairs = append(a.SourceTargetPairs, g.ints(2))
		}
		a.Dimensions = g.ints(1)
	case CustomCallExpander:
		a.CustomCall = &CustomCallAttrs{Target: []string{"Sharding", "TopK", "MoveToHost"}[g.rng.IntN(3)],
			APIVersion: customCallAPIVersions[g.rng.IntN(4)], Schedule: customCallSchedules[g.rng.IntN(3)],
			HasSideEffect: g.rng.IntN(2) == 0}
		switch g.rng.IntN(3) {
		case 0:
			a.CustomCall.BackendConfig = "opaque \"quoted\" text"
		case 1:
			a.CustomCall.BackendConfig, a.CustomCall.Braced = "{k = 4 : i64, largest = true}", true
		}
		if g.rng.IntN(2) == 0 {
			a.CustomCall.OutputToOperandAliasing = []OutputOperandAlias{{Output: g.someInts(), Operand: 0, OperandIndex: g.someInts()}}
			a.CustomCall.OperandLayoutConstraints = []Shape{g.shape(0)}
		}
	}
}

func (g *moduleGen) window() []WindowDim {
	w := make([]WindowDim, g.rng.IntN(3))
	for i := range w {
		w[i] = WindowDim{Size: int64(1 + g.rng.IntN(3)), Stride: int64(1 + g.rng.IntN(2)),
			PadLow: int64(g.rng.IntN(2)), PadHigh: int64(g.rng.IntN(3)) - 1,
			WindowDilation: int64(1 + g.rng.IntN(2)), BaseDilation: int64(1 + g.rng.IntN(2)),
			WindowReversal: g.rng.IntN(4) == 0}
	}
	return w
}

// convDims places batch, feature and n spatial dims at random positions per operand.
func (g *moduleGen) convDims(n int) *ConvDims {
	place := func() (int64, int64, []int64) {
		perm := g.rng.Perm(n + 2)
		spatial := make([]int64, n)
		for i := range spatial {
			spatial[i] = int64(perm[i+2])
		}
		return int64(perm[0]), int64(perm[1]), spatial
	}
	c := &ConvDims{}
	c.InputBatch, c.InputFeature, c.InputSpatial = place()
	c.KernelInput, c.KernelOutput, c.KernelSpatial = place()
	c.OutputBatch, c.OutputFeature, c.OutputSpatial = place()
	return c
}

// called picks callees for the opcode's roles (one to three conditional branches).
func (g *moduleGen) called(in *Instruction, callees []*Computation) {
	roles := len(in.Info().Called)
	if in.Op == OpConditional {
		roles = 1 + g.rng.IntN(3)
	}
	for range roles {
		in.Called = append(in.Called, callees[g.rng.IntN(len(callees))])
	}
}

// literal fills a literal with random values, special floats and extreme integers
// included.
func (g *moduleGen) literal(s Shape) *Literal {
	if s.IsTuple() {
		elems := make([]*Literal, len(s.Elems))
		for i, e := range s.Elems {
			elems[i] = g.literal(e)
		}
		return TupleLiteral(elems...)
	}
	l := NewLiteral(s)
	for i := range l.NumElements() {
		g.element(l, i)
	}
	return l
}

func (g *moduleGen) element(l *Literal, i int) {
	dt := l.DType()
	switch {
	case dt == Pred:
		l.SetBool(i, g.rng.IntN(2) == 0)
	case dt.IsInteger():
		l.SetBits(i, g.rng.Uint64())
	case g.rng.IntN(3) == 0:
		specials := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 0, 1e-45, 65504, 3.4e38}
		l.SetFloat64(i, specials[g.rng.IntN(len(specials))])
	default:
		l.SetBits(i, g.rng.Uint64()) // any bit pattern: subnormals, NaN payloads, …
	}
}
