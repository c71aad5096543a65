package cpuref

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Test helpers. Expected values in these tests are written by hand or computed from
// the op's definition with plain Go arithmetic, never by cpuref.

var (
	nan32  = float32(math.NaN())
	inf32  = float32(math.Inf(1))
	negZ32 = float32(math.Copysign(0, -1))
	nan64  = math.NaN()
	inf64  = math.Inf(1)
	negZ64 = math.Copysign(0, -1)
)

// vec builds a rank-1 literal; mat a literal of the given dims.
func vec[T hlo.Native](vals ...T) *hlo.Literal {
	return hlo.MustFromSlice([]int64{int64(len(vals))}, vals)
}

func mat[T hlo.Native](dims []int64, vals ...T) *hlo.Literal { return hlo.MustFromSlice(dims, vals) }

func scalar[T hlo.Native](v T) *hlo.Literal { return hlo.ScalarLiteral(v) }

func dims(d ...int64) []int64 { return d }

// f16s and bf16s build half-precision vectors from float32 values (each exactly
// representable, or rounded to nearest even by hlo's conversion).
func f16s(vals ...float32) *hlo.Literal {
	h := make([]hlo.Float16, len(vals))
	for i, v := range vals {
		h[i] = hlo.F16FromFloat32(v)
	}
	return vec(h...)
}

func bf16s(vals ...float32) *hlo.Literal {
	h := make([]hlo.BFloat16, len(vals))
	for i, v := range vals {
		h[i] = hlo.BF16FromFloat32(v)
	}
	return vec(h...)
}

// parse parses HLO text and fails the test on an error.
func parse(t *testing.T, text string) *hlo.Module {
	t.Helper()
	m, err := hlo.ParseModule(text)
	require.NoError(t, err)
	return m
}

// evalText parses a module and evaluates it.
func evalText(t *testing.T, text string, inputs ...*hlo.Literal) *hlo.Literal {
	t.Helper()
	out, err := Eval(parse(t, text), inputs...)
	require.NoError(t, err)
	return out
}

// assertLit checks exact equality (NaN matches NaN; -0 and +0 differ).
func assertLit(t *testing.T, want, got *hlo.Literal, msgAndArgs ...any) {
	t.Helper()
	assert.NoError(t, hlo.LiteralsEqual(got, want), msgAndArgs...)
}

// evalOp builds a module with one parameter per input and one instruction made by
// op, and evaluates it.
func evalOp(t *testing.T, op func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction, inputs ...*hlo.Literal) *hlo.Literal {
	t.Helper()
	b := hlo.NewBuilder("op")
	params := make([]*hlo.Instruction, len(inputs))
	for i, in := range inputs {
		params[i] = b.Parameter(in.Shape(), "p")
	}
	m, err := b.Build(op(b, params))
	require.NoError(t, err)
	out, err := Eval(m, inputs...)
	require.NoError(t, err)
	return out
}

func evalUnaryOp(t *testing.T, op hlo.Opcode, x *hlo.Literal) *hlo.Literal {
	t.Helper()
	return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.Unary(op, xs[0]) }, x)
}

func evalBinaryOp(t *testing.T, op hlo.Opcode, x, y *hlo.Literal) *hlo.Literal {
	t.Helper()
	return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction {
		return b.Binary(op, xs[0], xs[1])
	}, x, y)
}

// oneInstruction builds, without the builder, a module whose entry has parameters of
// the inputs' shapes and a root instruction with a declared shape: for cases the
// builder's shape rules reject on purpose (malformed IR) or do not express. Eval
// verifies it first; EvalComputation(m.Entry, …) runs the kernels on malformed IR.
func oneInstruction(op hlo.Opcode, shape hlo.Shape, attrs hlo.Attributes, inputs ...*hlo.Literal) *hlo.Module {
	c := &hlo.Computation{Name: "entry"}
	for i, in := range inputs {
		p := &hlo.Instruction{Name: fmt.Sprintf("p%d", i), Op: hlo.OpParameter, Shape: in.Shape()}
		p.Attrs.ParameterNumber = int64(i)
		c.Params = append(c.Params, p)
		c.Instructions = append(c.Instructions, p)
	}
	root := &hlo.Instruction{Name: "root", Op: op, Shape: shape, Operands: append([]*hlo.Instruction(nil), c.Params...), Attrs: attrs}
	c.Instructions = append(c.Instructions, root)
	c.Root = root
	return &hlo.Module{Name: "m", Computations: []*hlo.Computation{c}, Entry: c}
}
