package spirv

// Explicit layout follows std430, the rule set every Vulkan implementation
// accepts for storage buffers and push constants without extra features:
// scalars align to their size, two-component vectors to twice it, three- and
// four-component vectors to four times it, arrays to their element, structs
// to their largest member.

// SizeOf returns the std430 size in bytes of a type usable in a block.
func (m *Module) SizeOf(t ID) uint32 {
	size, _ := m.layout(t)
	return size
}

// AlignOf returns the std430 alignment in bytes of a type usable in a block.
func (m *Module) AlignOf(t ID) uint32 {
	_, align := m.layout(t)
	return align
}

func (m *Module) layout(t ID) (size, align uint32) {
	info := m.typeInfoOf(t)
	switch info.op {
	case OpTypeInt, OpTypeFloat:
		n := uint32(info.width / 8)
		return n, n
	case OpTypeVector:
		s, _ := m.layout(info.elem)
		if info.count == 2 {
			return 2 * s, 2 * s
		}
		return info.count * s, 4 * s
	case OpTypeArray:
		_, a := m.layout(info.elem)
		return info.count * m.stride(info), a
	case OpTypeStruct:
		return m.structLayout(info.members)
	}
	m.failf("type %s has no explicit layout (bool, pointer or runtime array inside a block)", m.TypeName(t))
	return 0, 1
}

// stride is an array's ArrayStride, or the std430 one for an undecorated array.
func (m *Module) stride(info *typeInfo) uint32 {
	if info.stride != 0 {
		return info.stride
	}
	return m.ElementStride(info.elem)
}

// ElementStride returns the std430 array stride of elem: its size rounded up
// to its alignment (16 for a vec3 of 32-bit components).
func (m *Module) ElementStride(elem ID) uint32 {
	size, align := m.layout(elem)
	return roundUp(size, align)
}

func (m *Module) structLayout(members []ID) (size, align uint32) {
	align = 1
	for i, off := range m.std430Offsets(members) {
		s, a := m.layout(members[i])
		align = max(align, a)
		size = off + s
	}
	return roundUp(size, align), align
}

// std430Offsets places each member at the next offset aligned for it. A
// trailing runtime array is placed at its element's alignment.
func (m *Module) std430Offsets(members []ID) []uint32 {
	offsets := make([]uint32, len(members))
	var next uint32
	for i, t := range members {
		info := m.typeInfoOf(t)
		if info.op == OpTypeRuntimeArray {
			if i != len(members)-1 {
				m.failf("a runtime array must be the last member of a block")
			}
			_, a := m.layout(info.elem)
			offsets[i] = roundUp(next, a)
			continue
		}
		s, a := m.layout(t)
		offsets[i] = roundUp(next, a)
		next = offsets[i] + s
	}
	return offsets
}

func roundUp(n, align uint32) uint32 {
	if align == 0 {
		return n
	}
	return (n + align - 1) / align * align
}

// checkExplicitLayout rejects block members whose layout this builder cannot
// express: arrays without ArrayStride and nested structs (which would need
// their own Offset decorations).
func (m *Module) checkExplicitLayout(t ID) {
	info := m.typeInfoOf(t)
	switch info.op {
	case OpTypeArray, OpTypeRuntimeArray:
		if info.stride == 0 {
			m.failf("block member %s needs an ArrayStride (use TypeArrayStride)", m.TypeName(t))
		}
		m.checkExplicitLayout(info.elem)
	case OpTypeStruct:
		m.failf("block member %s: nested structs are not supported in blocks", m.TypeName(t))
	case OpTypeBool, OpTypePointer:
		m.failf("block member %s has no explicit layout", m.TypeName(t))
	}
}
