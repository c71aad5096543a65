package hlo

// FirstDTypeUse returns the first instruction of m (computations in order) whose
// result shape has an element of a dtype that match accepts, tuple elements
// included. Operands are instructions too, so this finds every value of such a type.
// A back end uses it to refuse types it cannot handle before any pass runs.
func FirstDTypeUse(m *Module, match func(DType) bool) (*Instruction, DType) {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if dt, ok := shapeUses(in.Shape, match); ok {
				return in, dt
			}
		}
	}
	return nil, Invalid
}

func shapeUses(s Shape, match func(DType) bool) (DType, bool) {
	if !s.IsTuple() {
		return s.DType, s.IsArray() && match(s.DType)
	}
	for _, e := range s.Elems {
		if dt, ok := shapeUses(e, match); ok {
			return dt, true
		}
	}
	return Invalid, false
}
