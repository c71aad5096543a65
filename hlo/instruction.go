package hlo

// Instruction is one HLO operation: an opcode, its operands, its result shape, its
// attributes and the computations it calls. Instructions are owned by one Computation.
type Instruction struct {
	// Name is unique within the module (printed as %name).
	Name     string
	Op       Opcode
	Shape    Shape
	Operands []*Instruction
	Attrs    Attributes
	// Called holds the called computations in the roles opTable[Op].Called names;
	// for conditional, the branch computations in order.
	Called []*Computation
	// Sharding is the value's SPMD sharding annotation (sharding=…), nil where
	// none is written; only the spmd partitioner reads it.
	Sharding *Sharding
	// ID is the instruction's index in its computation's Instructions (kept by
	// Computation.Renumber), for dense per-instruction tables in passes.
	ID int
}

// Info returns the instruction's op-table row.
func (in *Instruction) Info() *OpInfo { return in.Op.Info() }

// Operand returns operand i.
func (in *Instruction) Operand(i int) *Instruction { return in.Operands[i] }
