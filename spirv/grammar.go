package spirv

import (
	"fmt"
	"strings"
)

//go:generate go run ./internal/gen

// Op is a SPIR-V opcode. The constants (OpFAdd, OpLoopMerge, ...) are generated
// from the Khronos grammar into opcodes_gen.go.
type Op uint16

// OpInfo is one instruction's row of the grammar.
type OpInfo struct {
	Name     string
	Class    string // grammar class, e.g. "Arithmetic", "Control-Flow"
	Operands []Operand
}

// Operand is one operand slot of an instruction in the grammar.
type Operand struct {
	Kind       OperandKind
	Quantifier Quantifier
	Name       string // the grammar's display name, may be empty
}

// Quantifier says how many times an operand slot may occur.
type Quantifier uint8

// Quantifiers of the grammar: exactly once, "?" and "*".
const (
	One Quantifier = iota
	Optional
	Variadic
)

// OperandKind is an operand kind of the grammar (IdRef, LiteralInteger,
// StorageClass, ...); the constants are generated.
type OperandKind uint8

func (k OperandKind) String() string {
	if int(k) < len(operandKindNames) {
		return operandKindNames[k]
	}
	return fmt.Sprintf("OperandKind(%d)", uint8(k))
}

// Info returns the grammar row of op, or nil for an opcode the grammar lacks.
func (op Op) Info() *OpInfo { return opInfos[op] }

func (op Op) String() string {
	if info := opInfos[op]; info != nil {
		return info.Name
	}
	return fmt.Sprintf("Op(%d)", uint16(op))
}

// HasResultType reports whether op's second word after the opcode names a type.
func (op Op) HasResultType() bool {
	info := opInfos[op]
	return info != nil && len(info.Operands) > 0 && info.Operands[0].Kind == OperandKindIdResultType
}

// HasResult reports whether op defines a result id.
func (op Op) HasResult() bool {
	info := opInfos[op]
	if info == nil {
		return false
	}
	for _, o := range info.Operands[:min(2, len(info.Operands))] {
		if o.Kind == OperandKindIdResult {
			return true
		}
	}
	return false
}

// minOperandWords is the fewest words the operands of op can take: one per
// required operand, two per required pair. The builder checks it to catch an
// emitter that forgot an operand before the validator reports it far away.
func (op Op) minOperandWords() int {
	info := opInfos[op]
	if info == nil {
		return 0
	}
	n := 0
	for _, o := range info.Operands {
		if o.Quantifier != One {
			continue
		}
		switch o.Kind {
		case OperandKindPairIdRefIdRef, OperandKindPairIdRefLiteralInteger, OperandKindPairLiteralIntegerIdRef:
			n += 2
		default:
			n++
		}
	}
	return n
}

// GLSLInst is an instruction number of the GLSL.std.450 extended set.
type GLSLInst uint32

func (g GLSLInst) String() string {
	if name, ok := glslInstNames[g]; ok {
		return name
	}
	return fmt.Sprintf("GLSLInst(%d)", uint32(g))
}

// bitName names one bit (or the zero value) of a bit-mask operand kind.
type bitName struct {
	bit  uint32
	name string
}

// bitString spells a mask as "A|B", with unknown bits in hex, the way
// spirv-dis does.
func bitString(v uint32, names []bitName) string {
	if v == 0 {
		for _, n := range names {
			if n.bit == 0 {
				return n.name
			}
		}
		return "0"
	}
	var parts []string
	for _, n := range names {
		if n.bit != 0 && v&n.bit == n.bit {
			parts = append(parts, n.name)
			v &^= n.bit
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", v))
	}
	return strings.Join(parts, "|")
}
