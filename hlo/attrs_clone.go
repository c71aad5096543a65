package hlo

// Clone deep-copies the attributes (the literal is immutable by convention and
// shared), for passes that copy an instruction into another computation.
func (a Attributes) Clone() Attributes { return cloneAttributes(a) }
