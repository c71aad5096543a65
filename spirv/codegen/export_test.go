package codegen

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// OpSample is op's kernel computation sample for the external tests (nil: the op
// never reaches code generation or has no sample), and ValidateProgram checks
// every kernel of a program with SPIRV-Tools.
func OpSample(t *testing.T, op hlo.Opcode) *hlo.Computation {
	if runtimeOps[op] {
		return nil
	}
	if f := sampleFor(op); f != nil {
		return f(t)
	}
	return nil
}

// ValidateProgram: see OpSample.
func ValidateProgram(t testing.TB, p *Program) { validate(t, p) }
