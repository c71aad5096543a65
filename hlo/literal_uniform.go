package hlo

// IsUniform reports a literal whose elements all have one bit pattern (scalars and
// empty arrays too): a splat, which a kernel can hold as one constant.
func (l *Literal) IsUniform() bool {
	if !l.Shape().IsArray() {
		return true
	}
	if size := l.DType().Size(); size > 8 { // c128: wider than Bits
		first := l.data[:size]
		for i := 1; i < l.NumElements(); i++ {
			if string(l.data[i*size:(i+1)*size]) != string(first) {
				return false
			}
		}
		return true
	}
	for i := 1; i < l.NumElements(); i++ {
		if l.Bits(i) != l.Bits(0) {
			return false
		}
	}
	return true
}
