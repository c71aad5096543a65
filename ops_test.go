package vkxla_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
)

// opCase is one differential check: a module, its inputs, and the error spec.
type opCase struct {
	name   string
	module *hlo.Module
	inputs []*hlo.Literal
	spec   vkxla.ErrorSpec
	// reference, when set, is what cpuref evaluates in place of module: the
	// same outputs from the same inputs by ops cpuref has (module's op on the
	// f64 planes of c128 values, where cpuref refuses c128).
	reference *hlo.Module
}

// caseGen makes the cases of one opcode for the device's dtypes.
type caseGen func(t testing.TB, g *gen) []opCase

// gen carries what case generators share: randomness and the device's dtypes.
type gen struct {
	rng    *rand.Rand
	dtypes []hlo.DType
}

// elementwiseShapes cover rank 0 to 4, odd sizes and sizes around a workgroup.
var elementwiseShapes = [][]int64{{}, {1}, {7}, {129}, {1025}, {3, 5}, {2, 3, 4}, {2, 3, 4, 5}, {0, 3}}

// supportedDTypes lists the element types the device computes with.
func supportedDTypes(c device.Caps) []hlo.DType {
	var out []hlo.DType
	for _, dt := range hlo.AllDTypes {
		switch {
		case dt.Size() == 1 && !(c.StorageBuffer8Bit && c.Int8),
			dt.Size() == 2 && !c.StorageBuffer16Bit,
			dt == hlo.F16 && !c.Float16,
			(dt == hlo.S16 || dt == hlo.U16) && !c.Int16,
			(dt == hlo.S64 || dt == hlo.U64) && !c.Int64,
			dt == hlo.F64 && !c.Float64:
			continue
		}
		out = append(out, dt)
	}
	return out
}

// shapesFor gives f32 (and s32) every shape and other types two, to bound the run.
func shapesFor(dt hlo.DType) [][]int64 {
	if dt == hlo.F32 || dt == hlo.S32 {
		return elementwiseShapes
	}
	return [][]int64{{}, {3, 5}}
}

// domainFor picks inputs where op is defined and worth comparing.
func domainFor(op hlo.Opcode, dt hlo.DType, operand int) domain {
	switch op {
	case hlo.OpLog, hlo.OpSqrt, hlo.OpRsqrt:
		return domain{0.05, 4}
	case hlo.OpLog1p:
		return domain{-0.9, 4}
	case hlo.OpExp, hlo.OpExpm1, hlo.OpTanh, hlo.OpLogistic:
		return domain{-4, 4}
	case hlo.OpSin, hlo.OpCos:
		return domain{-3, 3}
	case hlo.OpTan:
		return domain{-1.5, 1.5}
	case hlo.OpErf, hlo.OpRoundNearestAfz:
		return domain{-4, 4}
	case hlo.OpPower:
		if dt.IsFloat() {
			return [...]domain{{0.1, 3}, {-2, 2}}[operand]
		}
		return [...]domain{{-4, 4}, {-1, 6}}[operand]
	case hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic:
		if operand == 1 {
			return domain{0, float64(dt.Bits() + 2)}
		}
	case hlo.OpDivide, hlo.OpRemainder:
		if !dt.IsFloat() && operand == 1 {
			return domain{-3, 3} // includes division by zero
		}
	}
	return unitDomain
}

func opName(op hlo.Opcode, dt hlo.DType, dims []int64) string {
	return fmt.Sprintf("%s/%v", op, hlo.MakeShape(dt, dims...))
}

// elementwiseCases builds op over every allowed dtype and shape.
func elementwiseCases(op hlo.Opcode) caseGen {
	return func(t testing.TB, g *gen) []opCase {
		var cases []opCase
		for _, dt := range g.dtypes {
			if !op.Info().Types.Allows(dt) {
				continue
			}
			for _, dims := range shapesFor(dt) {
				cases = append(cases, elementwiseCase(t, g, op, dt, dims))
			}
		}
		if op == hlo.OpAdd {
			// More than 65535 workgroups of 128 invocations: the grid must wrap.
			cases = append(cases, elementwiseCase(t, g, op, hlo.F32, []int64{8_400_001}))
		}
		return cases
	}
}

func elementwiseCase(t testing.TB, g *gen, op hlo.Opcode, dt hlo.DType, dims []int64) opCase {
	b := hlo.NewBuilder(op.String())
	s := hlo.MakeShape(dt, dims...)
	var root *hlo.Instruction
	var inputs []*hlo.Literal
	for i := 0; i < op.Info().Arity; i++ {
		inputs = append(inputs, randomLiteral(g.rng, s, domainFor(op, dt, i)))
	}
	x := b.Parameter(s, "x")
	if op.Info().Arity == 1 {
		root = b.Unary(op, x)
	} else {
		root = b.Binary(op, x, b.Parameter(s, "y"))
	}
	return opCase{name: opName(op, dt, dims), module: mustBuild(t, b, root), inputs: inputs, spec: vkxla.Tolerance(op, dt)}
}

// opCases is the differential suite: every opcode has an entry.
var opCases = map[hlo.Opcode]caseGen{}

func init() {
	for _, op := range hlo.AllOpcodes() {
		if k := op.Info().Kind; k == hlo.KindUnary || k == hlo.KindBinary {
			opCases[op] = elementwiseCases(op)
		}
	}
}

func TestDifferentialCoverage(t *testing.T) {
	var missing []string
	for _, op := range hlo.AllOpcodes() {
		if opCases[op] == nil && op.Info().NoGPU == "" { // NoGPU ops: TestNoGPUOpsAreRefused
			missing = append(missing, op.String())
		}
	}
	require.Empty(t, missing, "opcodes without a differential GPU-vs-cpuref case")
}

func TestDifferentialOps(t *testing.T) {
	rt := newRuntime(t)
	g := &gen{rng: rand.New(rand.NewPCG(1, 2)), dtypes: supportedDTypes(rt.Device().Caps())}
	ops := hlo.AllOpcodes()
	slices.SortFunc(ops, func(a, b hlo.Opcode) int { return int(a) - int(b) })
	for _, op := range ops {
		gen := opCases[op]
		if gen == nil {
			continue // TestDifferentialCoverage reports it
		}
		t.Run(op.String(), func(t *testing.T) {
			for _, c := range gen(t, g) {
				t.Run(c.name, func(t *testing.T) {
					ref := c.module
					if c.reference != nil {
						ref = c.reference
					}
					checkAgainstReference(t, rt, c.module, ref, nil, c.spec, c.inputs...)
				})
			}
		})
	}
}
