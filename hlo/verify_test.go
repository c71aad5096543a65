package hlo

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verifyFixture builds a small valid module: a reducer, and an entry computing
// reduce(transpose(x) + y) with named instructions for the tests to corrupt.
func verifyFixture(t *testing.T) (*Module, map[string]*Instruction) {
	t.Helper()
	b := NewBuilder("main")
	x := b.Parameter(MakeShape(F32, 2, 3), "x")
	y := b.Parameter(MakeShape(F32, 3, 2), "y")
	tr := b.SetName(b.Transpose(x, 1, 0), "tr")
	sum := b.SetName(b.Add(tr, y), "sum")
	zero := b.SetName(b.ScalarConstant(F32, 0), "zero")
	red := b.SetName(b.Reduce([]*Instruction{sum}, []*Instruction{zero}, b.Reducer(OpAdd, F32), dims(0)), "red")
	sl := b.SetName(b.Slice(red, dims(0), dims(2), nil), "sl")
	m, err := b.Build(sl)
	require.NoError(t, err)
	require.NoError(t, Verify(m))
	byName := map[string]*Instruction{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			byName[in.Name] = in
		}
	}
	return m, byName
}

func TestVerifyNegative(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(m *Module, in map[string]*Instruction)
		want    string
	}{
		{"no entry", func(m *Module, _ map[string]*Instruction) { m.Entry = nil }, "has no entry computation"},
		{"entry not last", func(m *Module, _ map[string]*Instruction) { m.Entry = m.Computations[0] },
			`entry computation "add_f32" is not the module's last computation`},
		{"entry not in module", func(m *Module, _ map[string]*Instruction) { m.Entry = &Computation{Name: "other"} },
			"is not the module's last computation"},
		{"nil computation", func(m *Module, _ map[string]*Instruction) { m.Computations[0] = nil }, "computation 0 is nil"},
		{"computation listed twice", func(m *Module, _ map[string]*Instruction) {
			m.Computations = append([]*Computation{m.Entry}, m.Computations...)
		}, `computation "main" is listed twice`},
		{"unnamed computation", func(m *Module, _ map[string]*Instruction) { m.Computations[0].Name = "" },
			"computation 0 has no name"},
		{"duplicate computation names", func(m *Module, _ map[string]*Instruction) { m.Computations[0].Name = "main" },
			`two computations are named "main"`},
		{"recursion", func(m *Module, in map[string]*Instruction) {
			reducer := m.Computations[0]
			// The reducer's add becomes a call of the entry, which calls the reducer.
			add := reducer.Root
			add.Called = []*Computation{m.Entry}
		}, "recursion is not allowed"},
		{"self call", func(m *Module, in map[string]*Instruction) {
			in["sl"].Called = []*Computation{m.Entry}
		}, `computation "main" calls itself`},
		{"callee outside the module", func(m *Module, _ map[string]*Instruction) {
			m.Computations = m.Computations[1:]
		}, "calls a computation outside the module"},
		{"callee listed after its caller", func(m *Module, _ map[string]*Instruction) {
			reducer := m.Computations[0]
			other := &Computation{Name: "other"}
			m.Computations = []*Computation{other, reducer, m.Entry}
			// other calls the reducer, which is listed after it.
			ob := NewBuilder("other")
			ox := ob.Parameter(MakeShape(F32, 4), "ox")
			oz := ob.ScalarConstant(F32, 0)
			r := ob.Reduce([]*Instruction{ox}, []*Instruction{oz}, reducer, dims(0))
			c, err := ob.BuildComputation(r)
			require.NoError(t, err)
			*other = *c
		}, `computation "add_f32" is listed after its caller "other"`},
		{"no root", func(m *Module, _ map[string]*Instruction) { m.Entry.Root = nil }, `computation "main": has no root`},
		{"root elsewhere", func(m *Module, _ map[string]*Instruction) { m.Entry.Root = m.Computations[0].Root },
			"root add.3 is not one of its instructions"},
		{"nil instruction", func(m *Module, _ map[string]*Instruction) { m.Entry.Instructions[2] = nil },
			"instruction 2 is nil"},
		{"unnamed instruction", func(m *Module, in map[string]*Instruction) { in["tr"].Name = "" },
			"instruction 2 (transpose) has no name"},
		{"duplicate names in a computation", func(m *Module, in map[string]*Instruction) { in["sum"].Name = "tr" },
			"instruction name tr is used twice"},
		{"duplicate names across computations", func(m *Module, in map[string]*Instruction) { in["tr"].Name = "acc" },
			`instruction name acc is used twice (also in computation "add_f32")`},
		{"shared instruction", func(m *Module, _ map[string]*Instruction) {
			m.Entry.Instructions = append(m.Entry.Instructions, m.Computations[0].Root)
		}, `instruction add.3 also belongs to computation "add_f32"`},
		{"nil operand", func(m *Module, in map[string]*Instruction) { in["sum"].Operands[1] = nil },
			"instruction sum: operand 1 is nil"},
		{"operand from another computation", func(m *Module, in map[string]*Instruction) {
			in["sl"].Operands[0] = m.Computations[0].Root
		}, `instruction sl: operand 0 (add.3) belongs to computation "add_f32"`},
		{"operand after its user", func(m *Module, in map[string]*Instruction) {
			ins := m.Entry.Instructions
			ins[2], ins[3] = ins[3], ins[2] // sum before tr
		}, "instruction sum: operand 0 (tr) comes after its user"},
		{"operand outside every computation", func(m *Module, in map[string]*Instruction) {
			in["sl"].Operands[0] = &Instruction{Name: "ghost", Op: OpParameter, Shape: MakeShape(F32, 2)}
		}, "instruction sl: operand 0 (ghost) is not an instruction of this computation"},
		{"parameter missing from Params", func(m *Module, _ map[string]*Instruction) {
			m.Entry.Params = m.Entry.Params[:1]
		}, "has 2 parameter instructions but 1 Params"},
		{"Params holds a non-parameter", func(m *Module, in map[string]*Instruction) {
			m.Entry.Params[1] = in["tr"]
		}, "Params[1] (tr) is not a parameter instruction of this computation"},
		{"parameter numbers out of order", func(m *Module, _ map[string]*Instruction) {
			m.Entry.Params[0], m.Entry.Params[1] = m.Entry.Params[1], m.Entry.Params[0]
		}, "parameter y has number 1 at position 0"},
		{"arity", func(m *Module, in map[string]*Instruction) { in["sum"].Operands = in["sum"].Operands[:1] },
			"instruction sum: add: takes 2 operands, got 1"},
		{"called count", func(m *Module, in map[string]*Instruction) { in["red"].Called = nil },
			"instruction red: reduce: calls 1 computations [to_apply], got 0"},
		{"called signature", func(m *Module, in map[string]*Instruction) {
			c := mustComp(ScalarComparator(CmpLT, F32))
			m.Computations = append([]*Computation{c}, m.Computations...)
			in["red"].Called = []*Computation{c}
		}, "instruction red: reduce: to_apply computation"},
		{"declared shape", func(m *Module, in map[string]*Instruction) { in["sum"].Shape = MakeShape(F32, 2, 3) },
			"instruction sum: add: declared shape f32[2,3] differs from inferred shape f32[3,2]"},
		{"invalid shape", func(m *Module, in map[string]*Instruction) { in["x"].Shape = MakeShape(F32, -2, 3) },
			"instruction x: parameter: declared shape: shape f32[-2,3] has a negative dimension"},
		{"permutation", func(m *Module, in map[string]*Instruction) { in["tr"].Attrs.Dimensions = dims(1, 1) },
			"instruction tr: transpose: permutation [1 1] repeat dimension 1"},
		{"slice bounds", func(m *Module, in map[string]*Instruction) { in["sl"].Attrs.Slice[0].Limit = 3 },
			"instruction sl: slice: slice [0:3:1] of dimension 0 of f32[2] is out of bounds"},
		{"constant literal", func(m *Module, in map[string]*Instruction) { in["zero"].Attrs.Literal = nil },
			"instruction zero: constant: has no literal"},
		{"unknown opcode", func(m *Module, in map[string]*Instruction) { in["sum"].Op = numOpcodes },
			"unknown opcode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, byName := verifyFixture(t)
			c.corrupt(m, byName)
			var err error
			require.NotPanics(t, func() { err = Verify(m) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), `verify module "main"`)
		})
	}
	assert.ErrorContains(t, Verify(nil), "nil module")
}

// TestVerifyWindowFields checks the window invariants on a reduce-window.
func TestVerifyWindowFields(t *testing.T) {
	b := NewBuilder("rw")
	x := b.Parameter(MakeShape(F32, 4), "x")
	rw := b.ReduceWindow([]*Instruction{x}, []*Instruction{b.ScalarConstant(F32, 0)}, b.Reducer(OpMaximum, F32),
		MakeWindow(dims(2), dims(2)))
	m, err := b.Build(rw)
	require.NoError(t, err)
	for _, corrupt := range []func(w *WindowDim){
		func(w *WindowDim) { w.Stride = 0 },
		func(w *WindowDim) { w.Size = 0 },
		func(w *WindowDim) { w.BaseDilation = 0 },
		func(w *WindowDim) { w.WindowDilation = -1 },
	} {
		root := m.Entry.Root
		saved := root.Attrs.Window[0]
		corrupt(&root.Attrs.Window[0])
		assert.ErrorContains(t, Verify(m), "each must be at least 1")
		root.Attrs.Window[0] = saved
		require.NoError(t, Verify(m))
	}
}

// fusedModuleText is a module whose entry fuses the computation "fused" (whose
// instructions are body, after the parameters p: s32[] and q: pred[]) as f; cond and
// body are a while loop's, and inner is a small computation to call or fuse.
func fusedModuleText(body string) string {
	return `HloModule m
cond {
  n = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(n, ten), direction=LT
}
body {
  n = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(n, one)
}
inner {
  n = s32[] parameter(0)
  ROOT neg = s32[] negate(n)
}
fused {
  p = s32[] parameter(0)
  q = pred[] parameter(1)
` + body + `
}
ENTRY e {
  x = s32[] parameter(0)
  y = pred[] parameter(1)
  ROOT f = s32[] fusion(x, y), kind=kLoop, calls=fused
}`
}

// TestVerifyFusion: a fused computation must be flat (no while, conditional, call or
// fusion; parameters numbered without gaps), and the error names the fusion and the
// offending instruction. The same computations are fine under call.
func TestVerifyFusion(t *testing.T) {
	flat := fusedModuleText("  ROOT s = s32[] select(q, p, p)")
	m, err := ParseModule(flat)
	require.NoError(t, err)
	require.NoError(t, Verify(m))

	for _, c := range []struct{ name, body, want string }{
		{"while", "  ROOT w = s32[] while(p), condition=cond, body=body", "contains while instruction w "},
		{"conditional", "  ROOT c = s32[] conditional(q, p, p), true_computation=inner, false_computation=body",
			"contains conditional instruction c "},
		{"call", "  c = s32[] call(p), to_apply=inner\n  ROOT s = s32[] select(q, c, p)", "contains call instruction c "},
		{"nested fusion", "  ROOT g = s32[] fusion(p), kind=kLoop, calls=inner", "contains fusion instruction g "},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := fusedModuleText(c.body)
			m, err := ParseModuleUnverified(text)
			require.NoError(t, err)
			err = Verify(m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `verify module "m": computation "e": fusion instruction f: fused computation "fused" `+c.want)
			assert.Contains(t, err.Error(), "a fused computation must be flat")
			_, err = ParseModule(text)
			assert.ErrorContains(t, err, c.want, "the verifying parser rejects it too")

			// Called (not fused), the same computation is valid.
			called, err := ParseModule(strings.Replace(text, "fusion(x, y), kind=kLoop, calls=fused", "call(x, y), to_apply=fused", 1))
			require.NoError(t, err)
			require.NoError(t, Verify(called))
		})
	}

	t.Run("parameter gap", func(t *testing.T) {
		m, err := ParseModule(flat)
		require.NoError(t, err)
		m.Computation("fused").Params[1].Attrs.ParameterNumber = 2
		err = Verify(m)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `computation "e": fusion instruction f: fused computation "fused": parameter q has number 2, but there are 2 parameters (numbers must be 0…1 without gaps)`)
	})
	t.Run("parameter repeated", func(t *testing.T) {
		m, err := ParseModule(flat)
		require.NoError(t, err)
		m.Computation("fused").Params[1].Attrs.ParameterNumber = 0
		err = Verify(m)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `fusion instruction f: fused computation "fused": parameters p and q both have number 0`)
	})
	t.Run("builder", func(t *testing.T) {
		loop := NewBuilder("loop")
		n := loop.Parameter(Scalar(S32), "n")
		withWhile, err := loop.BuildComputation(loop.SetName(loop.While(countBelow(3), incrementS32(), n), "w"))
		require.NoError(t, err)
		b := NewBuilder("main")
		f := b.SetName(b.Fusion(FusionLoop, withWhile, b.Parameter(Scalar(S32), "x")), "f")
		require.NoError(t, b.Err(), "shape inference accepts it")
		_, err = b.Build(f)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `fusion instruction f: fused computation "loop" contains while instruction w `)
	})
}

// TestVerifyRejectsOverflowingShapes: shapes whose element count or byte size does
// not fit in int64 (f32[2^31,2^31,4] has 2^64 elements, which wrapped to 0 and "ran"
// returning 0 bytes) are refused by the builder and the verifier with ErrShapeTooLarge,
// and verify errors wrap ErrVerify.
func TestVerifyRejectsOverflowingShapes(t *testing.T) {
	huge := MakeShape(F32, 1<<31, 1<<31, 4)
	b := NewBuilder("huge")
	b.Parameter(huge, "p")
	require.ErrorIs(t, b.Err(), ErrShapeTooLarge)

	// Results larger than their operands: padding by 2^60 each side, and interior
	// padding whose product wrapped around to a small, plausible f32[1].
	for _, pad := range []PadDim{{Low: 1 << 60, High: 1 << 60}, {Low: -2, Interior: math.MaxInt64}} {
		b = NewBuilder("pad")
		x := b.Parameter(MakeShape(F32, 3), "x")
		b.Pad(x, b.ScalarConstant(F32, 0), []PadDim{pad})
		require.ErrorIs(t, b.Err(), ErrShapeTooLarge, "%+v", pad)
	}
	// 2^14 operands of 2^50 elements concatenated: the sum wrapped to f32[0].
	b = NewBuilder("concat")
	part := b.Parameter(MakeShape(F32, MaxShapeElements), "part")
	parts := make([]*Instruction, 1<<14)
	for i := range parts {
		parts[i] = part
	}
	b.Concatenate(0, parts...)
	require.ErrorIs(t, b.Err(), ErrShapeTooLarge)
	// A window dilation whose extent wraps: (3-1)·2^62 + 1.
	b = NewBuilder("window")
	x := b.Parameter(MakeShape(F32, 3), "x")
	b.ReduceWindow([]*Instruction{x}, []*Instruction{b.ScalarConstant(F32, 0)}, b.Reducer(OpAdd, F32),
		[]WindowDim{{Size: 1, Stride: 1, BaseDilation: 1 << 62, WindowDilation: 1}})
	require.ErrorIs(t, b.Err(), ErrShapeTooLarge)

	for _, s := range []Shape{huge, MakeShape(F32, 1<<50, 2), MakeShape(S32, 1<<62, 1<<62, 0, -1),
		MakeTuple(repeatShape(MakeShape(F64, MaxShapeElements), 1024)...)} {
		m := parameterModule(s)
		err := Verify(m)
		require.ErrorIs(t, err, ErrVerify, "%v", s)
		assert.Contains(t, err.Error(), "verify module")
		if s.Dims == nil || s.Dims[len(s.Dims)-1] >= 0 {
			assert.ErrorIs(t, err, ErrShapeTooLarge, "%v", s)
		}
	}
	// The limit itself is allowed, in the verifier and in ByteSizeChecked.
	ok := MakeTuple(MakeShape(F64, MaxShapeElements), MakeShape(F32, 0, 1<<50))
	require.NoError(t, Verify(parameterModule(ok)))
	n, err := ok.ByteSizeChecked()
	require.NoError(t, err)
	assert.Equal(t, int64(8)<<50, n)
	require.ErrorIs(t, Verify(nil), ErrVerify)
}

func TestByteSizeChecked(t *testing.T) {
	for _, c := range []struct {
		s    Shape
		want int64
	}{
		{MakeShape(F32, 2, 3), 24}, {Scalar(S8), 1}, {MakeShape(F64, 1<<20, 1<<30), 8 << 50},
		{MakeTuple(MakeShape(F16, 3), MakeTuple(Scalar(S64))), 14},
	} {
		got, err := c.s.ByteSizeChecked()
		require.NoError(t, err, "%v", c.s)
		assert.Equal(t, c.want, got, "%v", c.s)
	}
	for _, s := range []Shape{MakeShape(F32, 1<<31, 1<<31, 4), MakeShape(Pred, 1<<51),
		MakeShape(F32, 0, 1<<62, 1<<62), // no elements, but strides would overflow
		MakeTuple(repeatShape(MakeShape(F64, MaxShapeElements), 1024)...)} {
		_, err := s.ByteSizeChecked()
		assert.ErrorIs(t, err, ErrShapeTooLarge, "%v", s)
	}
	_, err := MakeShape(F32, 2, -1).ByteSizeChecked()
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrShapeTooLarge)
}

func repeatShape(s Shape, n int) []Shape {
	out := make([]Shape, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// parameterModule is a module whose entry returns one parameter of shape s, built
// without the builder (which would refuse a bad shape).
func parameterModule(s Shape) *Module {
	p := &Instruction{Name: "p", Op: OpParameter, Shape: s}
	c := &Computation{Name: "e", Instructions: []*Instruction{p}, Params: []*Instruction{p}, Root: p}
	return &Module{Name: "m", Computations: []*Computation{c}, Entry: c}
}
