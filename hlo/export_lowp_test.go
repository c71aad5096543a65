package hlo

// TextSampleFor exposes the per-opcode sample modules to the external test package
// (lowp_sweep_test.go), which evaluates them with cpuref.
var TextSampleFor = textSampleFor

// NumOpcodes is the number of opcodes, for sweeps over the op table.
const NumOpcodes = int(numOpcodes)
