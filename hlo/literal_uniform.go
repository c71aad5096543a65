package hlo

// IsUniform reports a literal whose elements all have one bit pattern (scalars and
// empty arrays too): a splat, which a kernel can hold as one constant.
func (l *Literal) IsUniform() bool {
	if !l.Shape().IsArray() {
		return true
	}
	for i := 1; i < l.NumElements(); i++ {
		if l.Bits(i) != l.Bits(0) {
			return false
		}
	}
	return true
}
