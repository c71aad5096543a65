package hlo

// Leaves flattens a (possibly nested) tuple shape into its array leaves, in order;
// an array shape is its own only leaf. The runtime keeps one buffer per leaf.
func (s Shape) Leaves() []Shape {
	if !s.IsTuple() {
		return []Shape{s}
	}
	var out []Shape
	for _, e := range s.Elems {
		out = append(out, e.Leaves()...)
	}
	return out
}

// Leaves flattens a tuple literal into its array leaves (shared, not copied), in
// the order Shape.Leaves gives; an array literal is its own only leaf.
func (l *Literal) Leaves() []*Literal {
	if !l.shape.IsTuple() {
		return []*Literal{l}
	}
	var out []*Literal
	for _, e := range l.elems {
		out = append(out, e.Leaves()...)
	}
	return out
}
