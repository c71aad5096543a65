package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildMLP builds relu(x·w + b) summed over the batch: the shape of most programs.
func buildMLP(t *testing.T) *Module {
	t.Helper()
	b := NewBuilder("mlp")
	x := b.Parameter(MakeShape(F32, 4, 3), "x")
	w := b.Parameter(MakeShape(F32, 3, 2), "w")
	bias := b.Parameter(MakeShape(F32, 2), "b")
	h := b.Add(b.Dot(x, w), b.Broadcast(bias, []int64{4, 2}, []int64{1}))
	relu := b.Max(h, b.BroadcastScalar(b.ScalarConstant(F32, 0), 4, 2))
	sum := b.Reduce([]*Instruction{relu}, []*Instruction{b.ScalarConstant(F32, 0)}, b.Reducer(OpAdd, F32), []int64{0})
	m, err := b.Build(sum)
	require.NoError(t, err)
	return m
}

func TestBuilderMLP(t *testing.T) {
	m := buildMLP(t)
	require.Len(t, m.Computations, 2)
	assert.Equal(t, "add_f32", m.Computations[0].Name)
	assert.Same(t, m.Entry, m.Computations[1])
	assertShape(t, MakeShape(F32, 2), m.Entry.Root)
	require.Len(t, m.Entry.Params, 3)
	assert.Equal(t, "x", m.Entry.Params[0].Name)
	assert.Equal(t, int64(2), m.Entry.Params[2].Attrs.ParameterNumber)
	assert.NoError(t, Verify(m))
}

func TestBuilderStickyError(t *testing.T) {
	b := NewBuilder("main")
	x := b.Parameter(MakeShape(F32, 2, 3), "x")
	y := b.Parameter(MakeShape(F32, 3), "y")
	sum := b.Add(x, y)
	assert.Nil(t, sum)
	err := b.Err()
	require.Error(t, err)
	assert.Equal(t, `hlo builder "main": add(x: f32[2,3], y: f32[3]): operand shapes f32[2,3] and f32[3] differ`, err.Error())

	// Later calls return nil and keep the first error.
	assert.Nil(t, b.Exp(x))
	assert.Nil(t, b.Mul(sum, x))
	assert.Nil(t, b.Parameter(Scalar(F32), "z"))
	assert.Equal(t, err, b.Err())
	_, buildErr := b.Build(x)
	assert.Equal(t, err, buildErr)
	_, compErr := b.BuildComputation(x)
	assert.Equal(t, err, compErr)
}

func TestBuilderNilOperandsNeverPanic(t *testing.T) {
	calls := map[string]func(b *Builder) *Instruction{
		"add":        func(b *Builder) *Instruction { return b.Add(nil, nil) },
		"exp":        func(b *Builder) *Instruction { return b.Exp(nil) },
		"compare":    func(b *Builder) *Instruction { return b.Compare(nil, nil, CmpEQ) },
		"select":     func(b *Builder) *Instruction { return b.Select(nil, nil, nil) },
		"convert":    func(b *Builder) *Instruction { return b.Convert(nil, F32) },
		"bitcast":    func(b *Builder) *Instruction { return b.BitcastConvert(nil, F32) },
		"broadcast":  func(b *Builder) *Instruction { return b.Broadcast(nil, dims(2), dims(0)) },
		"reshape":    func(b *Builder) *Instruction { return b.Reshape(nil, 2) },
		"slice":      func(b *Builder) *Instruction { return b.Slice(nil, dims(0), dims(1), nil) },
		"concat":     func(b *Builder) *Instruction { return b.Concatenate(0, nil) },
		"concat0":    func(b *Builder) *Instruction { return b.Concatenate(0) },
		"pad":        func(b *Builder) *Instruction { return b.Pad(nil, nil, nil) },
		"dyn-slice":  func(b *Builder) *Instruction { return b.DynamicSlice(nil, []*Instruction{nil}, dims(1)) },
		"dyn-update": func(b *Builder) *Instruction { return b.DynamicUpdateSlice(nil, nil, nil) },
		"gather":     func(b *Builder) *Instruction { return b.Gather(nil, nil, GatherDims{}, nil) },
		"scatter":    func(b *Builder) *Instruction { return b.Scatter(nil, nil, nil, nil, ScatterDims{}) },
		"reduce":     func(b *Builder) *Instruction { return b.Reduce(nil, nil, nil, nil) },
		"reduce-win": func(b *Builder) *Instruction { return b.ReduceWindow([]*Instruction{nil}, nil, nil, nil) },
		"sas":        func(b *Builder) *Instruction { return b.SelectAndScatter(nil, nil, nil, nil, nil, nil) },
		"dot":        func(b *Builder) *Instruction { return b.Dot(nil, nil) },
		"dot-gen":    func(b *Builder) *Instruction { return b.DotGeneral(nil, nil, DotDims{}) },
		"conv":       func(b *Builder) *Instruction { return b.Conv(nil, nil, nil, ConvDims{}, 0, 0) },
		"sort":       func(b *Builder) *Instruction { return b.Sort(nil, nil, 0, false) },
		"tuple":      func(b *Builder) *Instruction { return b.Tuple(nil) },
		"gte":        func(b *Builder) *Instruction { return b.GetTupleElement(nil, 0) },
		"while":      func(b *Builder) *Instruction { return b.While(nil, nil, nil) },
		"cond":       func(b *Builder) *Instruction { return b.Conditional(nil, nil, nil) },
		"call":       func(b *Builder) *Instruction { return b.Call(nil, nil) },
		"fusion":     func(b *Builder) *Instruction { return b.Fusion(FusionLoop, nil, nil) },
		"constant":   func(b *Builder) *Instruction { return b.Constant(nil) },
		"set-name":   func(b *Builder) *Instruction { return b.SetName(nil, "x") },
	}
	for name, call := range calls {
		b := NewBuilder("nil")
		assert.NotPanics(t, func() { assert.Nil(t, call(b)) }, name)
		if name != "set-name" {
			assert.Error(t, b.Err(), name)
		}
	}
	b := NewBuilder("nil")
	b.Add(b.Parameter(Scalar(F32), "x"), nil)
	assert.ErrorContains(t, b.Err(), "add(x: f32[], <nil>): operand 1 is nil")
	_, err := NewBuilder("empty").Build(nil)
	assert.ErrorContains(t, err, "root is nil")
}

func TestBuilderRejectsForeignAndLateOperands(t *testing.T) {
	other := NewBuilder("other")
	y := other.Parameter(Scalar(F32), "y")
	b := NewBuilder("main")
	x := b.Parameter(Scalar(F32), "x")
	assert.Nil(t, b.Add(x, y))
	assert.ErrorContains(t, b.Err(), "operand 1 (y) belongs to another builder")

	_, err := b.BuildComputation(y)
	assert.Error(t, err)

	done := NewBuilder("done")
	z := done.Parameter(Scalar(F32), "z")
	c, err := done.BuildComputation(z)
	require.NoError(t, err)
	again, err := done.BuildComputation(z)
	require.NoError(t, err)
	assert.Same(t, c, again)
	assert.Nil(t, done.Negate(z))
	assert.ErrorContains(t, done.Err(), "already built")
}

func TestBuilderScalarConstants(t *testing.T) {
	b := NewBuilder("c")
	h := b.ScalarConstant(F16, 65520)
	require.NotNil(t, h)
	assert.Equal(t, uint64(0x7c00), h.Attrs.Literal.Bits(0))
	assert.Equal(t, int64(-128), b.ScalarConstant(S8, -128).Attrs.Literal.Int64(0))
	assert.Equal(t, uint64(255), b.ScalarConstant(U8, 255).Attrs.Literal.Uint64(0))
	assert.True(t, b.ScalarConstant(Pred, 1).Attrs.Literal.Bool(0))
	require.NoError(t, b.Err())
	for _, bad := range []struct {
		dt  DType
		v   float64
		err string
	}{
		{S8, 128, "out of range for s8"},
		{U8, -1, "out of range for u8"},
		{U64, 0x1p64, "out of range for u64"},
		{S32, 1.5, "1.5 is not a s32 value"},
		{Pred, 2, "not a pred value"},
		{Tuple, 0, "invalid element type"},
	} {
		b := NewBuilder("c")
		assert.Nil(t, b.ScalarConstant(bad.dt, bad.v))
		assert.ErrorContains(t, b.Err(), bad.err)
	}
}

func TestBuilderNames(t *testing.T) {
	b := NewBuilder("names")
	x := b.Parameter(Scalar(F32), "x")
	x2 := b.Parameter(Scalar(F32), "x")
	p := b.Parameter(Scalar(F32), "")
	sum := b.Add(x, x2)
	assert.Equal(t, "x", x.Name)
	assert.Equal(t, "x.1", x2.Name)
	assert.Equal(t, "param.2", p.Name)
	assert.Equal(t, "add.4", sum.Name)
	b.SetName(sum, "x")
	assert.Equal(t, "x.2", sum.Name)
	b.SetName(sum, "total")
	assert.Equal(t, "total", sum.Name)
}

func TestBuildGathersCalleesWithUniqueNames(t *testing.T) {
	shared := mustComp(ScalarReducer(OpAdd, F32))
	sameName := mustComp(ScalarReducer(OpAdd, F32))
	b := NewBuilder("main")
	x := b.Parameter(MakeShape(F32, 4), "x")
	zero := b.ScalarConstant(F32, 0)
	r1 := b.Reduce([]*Instruction{x}, []*Instruction{zero}, shared, dims(0))
	r2 := b.Reduce([]*Instruction{x}, []*Instruction{zero}, shared, dims(0))
	r3 := b.Reduce([]*Instruction{x}, []*Instruction{zero}, sameName, dims(0))
	m, err := b.Build(b.Tuple(r1, r2, r3))
	require.NoError(t, err)

	require.Len(t, m.Computations, 3, "a computation called twice appears once")
	assert.Equal(t, []string{"add_f32", "add_f32.1", "main"},
		[]string{m.Computations[0].Name, m.Computations[1].Name, m.Computations[2].Name})
	names := map[string]bool{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			assert.False(t, names[in.Name], "duplicate %s", in.Name)
			names[in.Name] = true
		}
	}
	assert.Equal(t, "x", m.Entry.Params[0].Name, "entry names win")
	assert.Equal(t, "x.1", m.Computations[0].Params[1].Name)

	// The module holds copies: the shared reducer is untouched and reusable.
	assert.Equal(t, "x", shared.Params[1].Name)
	assert.NotSame(t, shared, m.Computations[0])
	assert.Same(t, m.Computations[0], m.Entry.Root.Operands[0].Called[0])
	assert.NotSame(t, x, m.Entry.Params[0])
}

func TestBuildNestedCallees(t *testing.T) {
	// A while loop whose body reduces with a reducer: reducer, then cond and body,
	// then the entry.
	state := MakeShape(F32, 3)
	cond := compOf("cond", shp(state), func(b *Builder, ps []*Instruction) *Instruction {
		sum := b.Reduce([]*Instruction{ps[0]}, []*Instruction{b.ScalarConstant(F32, 0)}, b.Reducer(OpAdd, F32), dims(0))
		return b.Compare(sum, b.ScalarConstant(F32, 100), CmpLT)
	})
	body := compOf("body", shp(state), func(b *Builder, ps []*Instruction) *Instruction {
		return b.Mul(ps[0], b.BroadcastScalar(b.ScalarConstant(F32, 2), 3))
	})
	b := NewBuilder("loop")
	m, err := b.Build(b.While(cond, body, b.Parameter(state, "init")))
	require.NoError(t, err)
	var order []string
	for _, c := range m.Computations {
		order = append(order, c.Name)
	}
	assert.Equal(t, []string{"add_f32", "cond", "body", "loop"}, order)
}

func TestBuilderOpDefaults(t *testing.T) {
	b := NewBuilder("defaults")
	x := b.Parameter(MakeShape(F32, 1, 3, 5, 5), "x")
	k := b.Parameter(MakeShape(F32, 4, 3, 3, 3), "k")
	conv := b.Conv(x, k, MakeWindow(dims(3, 3), dims(2, 2)), DefaultConvDims(2), 0, 0)
	require.NoError(t, b.Err())
	assert.Equal(t, int64(1), conv.Attrs.FeatureGroupCount)
	assert.Equal(t, int64(1), conv.Attrs.BatchGroupCount)
	assertShape(t, MakeShape(F32, 1, 4, 2, 2), conv)
	sl := b.Slice(x, dims(0, 0, 1, 1), dims(1, 3, 4, 5), nil)
	assert.Equal(t, SliceDim{1, 4, 1}, sl.Attrs.Slice[2])
	assert.Nil(t, b.Slice(x, dims(0), dims(1, 2), nil))
	assert.ErrorContains(t, b.Err(), "differ in length")

	for _, bad := range []func(b *Builder) *Instruction{
		func(b *Builder) *Instruction {
			return b.Dot(b.Parameter(MakeShape(F32, 2, 2, 2), "x"), b.Parameter(MakeShape(F32, 2), "y"))
		},
		func(b *Builder) *Instruction { return b.Unary(OpAdd, b.Parameter(MakeShape(F32, 2), "x")) },
		func(b *Builder) *Instruction { x := b.Parameter(Scalar(F32), "x"); return b.Binary(OpExp, x, x) },
	} {
		b := NewBuilder("bad")
		assert.Nil(t, bad(b))
		assert.Error(t, b.Err())
	}
	_, err := ScalarReducer(OpCompare, F32)
	assert.ErrorContains(t, err, "compare is not a binary elementwise op")
	_, err = ScalarComparator(CmpLT)
	assert.Error(t, err)
	assert.Nil(t, NewBuilder("r").Reducer(OpAnd, F32))
}

func TestBuilderBitcastAndConvert(t *testing.T) {
	b := NewBuilder("bits")
	x := b.Parameter(MakeShape(F32, 2), "x")
	assertShape(t, MakeShape(U8, 2, 4), b.BitcastConvert(x, U8))
	assertShape(t, MakeShape(F64), b.BitcastConvert(b.Parameter(MakeShape(F32, 2), "y"), F64))
	assertShape(t, MakeShape(Pred, 2), b.Convert(x, Pred))
	require.NoError(t, b.Err())
	assert.Nil(t, b.BitcastConvert(b.Parameter(MakeShape(F32, 3), "z"), F64))
	assert.ErrorContains(t, b.Err(), "needs a minor dimension of 2")
}

// assertShape compares shapes with Shape.Equal (a scalar's dims may be nil or empty).
func assertShape(t *testing.T, want Shape, in *Instruction) {
	t.Helper()
	if assert.NotNil(t, in) {
		assert.True(t, want.Equal(in.Shape), "shape %v, want %v", in.Shape, want)
	}
}
