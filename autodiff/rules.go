package autodiff

import (
	"github.com/vkxla/vkxla/hlo"
)

// row is one opcode's entry in the VJP table. Exactly one of its fields is set
// (TestTableCoverage checks it for every opcode):
//
//   - vjp maps the cotangent of the node's result to cotangents of its operands
//     (nil entries are zero); it reads the replayed operands and result from the
//     node and builds the backward ops with the engine's builder;
//   - expand replaces the instruction during the forward replay by ops that are
//     differentiated instead (call and fusion are inlined; while becomes a stacking
//     loop whose tape node carries its backward loop);
//   - zero gives the reason no cotangent reaches the operands: the derivative is
//     zero wherever it exists (floor, sign, …) or the result is never floating
//     point (compare, bitwise ops);
//   - leaf marks the operand-less ops (parameter, constant, iota);
//   - notDifferentiable gives the reason an op has no derivative; reaching one on
//     the differentiated path is an error naming it.
type row struct {
	vjp               func(e *engine, n *node, ct *cot) ([]*cot, error)
	expand            func(e *engine, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error)
	zero              string
	leaf              bool
	notDifferentiable string
}

// arrayRule is the form of the rules of ops with one array result: the result's
// cotangent in, one cotangent per operand out (nil for none).
type arrayRule func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error)

func arrayVJP(f arrayRule) row {
	return row{vjp: func(e *engine, n *node, ct *cot) ([]*cot, error) {
		if ct.arr == nil {
			return nil, nil
		}
		grads, err := f(e, n, ct.arr)
		if err != nil {
			return nil, err
		}
		out := make([]*cot, len(grads))
		for i, g := range grads {
			if g != nil {
				out[i] = &cot{arr: g}
			}
		}
		return out, nil
	}}
}

var table map[hlo.Opcode]row

func init() {
	table = map[hlo.Opcode]row{
		hlo.OpParameter: {leaf: true},
		hlo.OpConstant:  {leaf: true},
		hlo.OpIota:      {leaf: true},

		hlo.OpBitcastConvert: {notDifferentiable: "bitcast-convert reinterprets bits; its result is not a smooth function of its operand"},

		hlo.OpTuple:           {vjp: vjpTuple},
		hlo.OpGetTupleElement: {vjp: vjpGetTupleElement},
		hlo.OpCall:            {expand: expandCall},
		hlo.OpFusion:          {expand: expandCall},
		hlo.OpWhile:           {expand: expandWhile},
		hlo.OpConditional:     {vjp: vjpConditional},
	}
	for op, r := range elementwiseRows() {
		table[op] = r
	}
	for op, r := range movementRows() {
		table[op] = r
	}
	for op, r := range reductionRows() {
		table[op] = r
	}
	for op, r := range expandedRows() {
		table[op] = r
	}
	table[hlo.OpComplex] = complexRow // rules_complex.go
	table[hlo.OpFft] = fftRow
}
