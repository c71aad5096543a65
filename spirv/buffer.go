package spirv

import "fmt"

// Buffer is a storage buffer that a kernel reads and writes element by element. It
// is reached in one of three ways, which the code using it need not tell apart
// (LoadElem, StoreElem, AtomicElem, View):
//
//   - one binding (StorageBuffer): a StorageBuffer variable of a Block holding one
//     runtime array of Elem — `buffer B { Elem data[]; }` in GLSL;
//   - split bindings (SplitStorageBuffer): consecutive bindings of such blocks, each
//     holding PieceLen elements but the last, for a buffer larger than one binding
//     may cover (Vulkan's maxStorageBufferRange); every access picks its binding by
//     the element index;
//   - a device address (Function.AddressedBuffer): a PhysicalStorageBuffer64 pointer
//     to such a block, made from a 64-bit buffer device address, with no range limit.
type Buffer struct {
	// Var is the StorageBuffer variable (the first piece's, when split) or the
	// pointer (addressed). It is 0 only in the zero Buffer, which code uses to mean
	// "no buffer".
	Var  ID
	Elem ID // element type

	set, binding uint32 // of the (first) binding
	access       Access
	pieces       []ID  // split: each piece's variable, in binding order
	pieceLen     int64 // split: elements in every piece but the last
	addr         ID    // addressed: the u64 device address
}

// Split reports whether the buffer is bound as several bindings.
func (b Buffer) Split() bool { return len(b.pieces) > 1 }

// Addressed reports whether the buffer is reached through a device address.
func (b Buffer) Addressed() bool { return b.addr != 0 }

// StorageBuffer declares a storage-buffer binding of a runtime array of elem
// (std430 stride) at (set, binding), with the capabilities and extensions
// that its element type and the module version need.
func (m *Module) StorageBuffer(name string, set, binding uint32, elem ID, access Access) Buffer {
	return Buffer{Var: m.bufferVariable(name, set, binding, elem, access), Elem: elem, set: set, binding: binding, access: access}
}

// SplitStorageBuffer declares a buffer bound as pieces consecutive bindings from
// (set, first), each a runtime array of elem holding pieceLen elements but the last:
// element i lives in binding first + i/pieceLen at index i%pieceLen.
func (m *Module) SplitStorageBuffer(name string, set, first uint32, pieces int, pieceLen int64, elem ID, access Access) Buffer {
	if pieces < 1 || pieceLen < 1 {
		m.failf("split buffer %s: %d pieces of %d elements", name, pieces, pieceLen)
		return Buffer{}
	}
	b := Buffer{Elem: elem, set: set, binding: first, access: access, pieceLen: pieceLen}
	for p := range pieces {
		b.pieces = append(b.pieces, m.bufferVariable(fmt.Sprintf("%s_%d", name, p), set, first+uint32(p), elem, access))
	}
	b.Var = b.pieces[0]
	return b
}

// bufferVariable declares one storage-buffer binding of a runtime array of elem.
func (m *Module) bufferVariable(name string, set, binding uint32, elem ID, access Access) ID {
	m.needStorageClass(StorageClassStorageBuffer)
	v := m.Variable(StorageClassStorageBuffer, m.bufferBlock(elem), name)
	m.Decorate(v, DecorationDescriptorSet, set)
	m.Decorate(v, DecorationBinding, binding)
	m.decorateAccess(v, access)
	return v
}

// bufferBlock is the Block struct holding one runtime array of elem, shared by
// bindings and device-address pointers.
func (m *Module) bufferBlock(elem ID) ID {
	m.needNarrowStorage(elem, StorageClassStorageBuffer)
	arr := m.TypeRuntimeArray(elem, m.ElementStride(elem))
	block := m.TypeBlock(Member{Name: "data", Type: arr})
	m.Name(block, "Buffer_"+identifier(m.TypeName(elem)))
	return block
}

// AddressedBuffer is the buffer whose 64-bit device address is element slot of
// table (a buffer of u64): the address is read once, at the start of the entry
// block, and made a PhysicalStorageBuffer64 pointer to a block of elem (the module
// switches to that addressing model, with its capability and extension).
func (f *Function) AddressedBuffer(name string, table Buffer, slot uint32, elem ID) Buffer {
	var addr ID
	f.InEntry(func() { addr = f.LoadElem(table, f.m.U32(slot)) })
	f.m.Name(addr, name+"_addr")
	return f.pointerBuffer(name, addr, elem)
}

// pointerBuffer turns a u64 address into a buffer of elem, in the entry block.
func (f *Function) pointerBuffer(name string, addr, elem ID) Buffer {
	m := f.m
	if t := m.TypeOf(addr); !m.IsInt(t) || m.Width(t) != 64 {
		m.failf("buffer %s: a device address is a 64-bit integer, not %s", name, m.TypeName(t))
		return Buffer{}
	}
	ptrT := m.TypePointer(StorageClassPhysicalStorageBuffer, m.bufferBlock(elem))
	var ptr ID
	f.InEntry(func() { ptr = f.Op(OpConvertUToPtr, ptrT, uint32(addr)) })
	m.Name(ptr, name)
	return Buffer{Var: ptr, Elem: elem, addr: addr}
}

// View is another element type's view of the same memory as b (a vec4 view of a
// float buffer, say): the same binding(s) declared again, or the same address as
// another pointer. A split buffer's pieces must hold whole elements of the view.
func (f *Function) View(b Buffer, name string, elem ID) Buffer {
	m := f.m
	switch {
	case b.Addressed():
		return f.pointerBuffer(name, b.addr, elem)
	case b.Split():
		oldStride, newStride := int64(m.ElementStride(b.Elem)), int64(m.ElementStride(elem))
		if bytes := b.pieceLen * oldStride; bytes%newStride != 0 {
			m.failf("view %s: pieces of %d bytes do not hold whole %s elements", name, bytes, m.TypeName(elem))
			return Buffer{}
		}
		return m.SplitStorageBuffer(name, b.set, b.binding, len(b.pieces), b.pieceLen*oldStride/newStride, elem, b.access)
	}
	return m.StorageBuffer(name, b.set, b.binding, elem, b.access)
}

// Element returns a pointer to element i of a buffer bound whole or reached by
// address. A split buffer has no single pointer to its elements: use LoadElem,
// StoreElem or AtomicElem.
func (f *Function) Element(b Buffer, i ID) ID {
	if b.Split() {
		f.m.failf("Element: buffer %d is split across bindings; use LoadElem, StoreElem or AtomicElem", b.Var)
		return 0
	}
	return f.AccessChain(b.Var, f.m.U32(0), i)
}

// LoadElem reads element i of a storage buffer.
func (f *Function) LoadElem(b Buffer, i ID) ID {
	if !b.Split() {
		return f.Load(f.Element(b, i))
	}
	return f.inPiece(b, i, b.Elem, func(ptr ID) ID { return f.Load(ptr) })
}

// StoreElem writes v to element i of a storage buffer.
func (f *Function) StoreElem(b Buffer, i, v ID) {
	if !b.Split() {
		f.Store(f.Element(b, i), v)
		return
	}
	f.inPiece(b, i, 0, func(ptr ID) ID { f.Store(ptr, v); return 0 })
}

// AtomicElem applies a read-modify-write atomic (see Atomic) to element i of a
// storage buffer and returns the old value.
func (f *Function) AtomicElem(op Op, b Buffer, i, v ID) ID {
	if !b.Split() {
		return f.Atomic(op, f.Element(b, i), v)
	}
	return f.inPiece(b, i, f.m.TypeOf(v), func(ptr ID) ID { return f.Atomic(op, ptr, v) })
}

// inPiece runs access on the pointer to element i of split buffer b, in a branch
// per piece chosen by i's piece index, and returns the value access returns (of
// type t; 0: none). Only the chosen piece is touched.
func (f *Function) inPiece(b Buffer, i, t ID, access func(ptr ID) ID) ID {
	m := f.m
	it := m.TypeOf(i)
	n := m.ConstInt(it, b.pieceLen)
	piece, at := f.Div(i, n), f.Rem(i, n)
	var from func(p int) ID
	from = func(p int) ID {
		here := func() ID { return access(f.AccessChain(b.pieces[p], m.U32(0), at)) }
		if p == len(b.pieces)-1 {
			return here()
		}
		cond := f.Equal(piece, m.ConstInt(it, int64(p)))
		if t == 0 {
			f.If(cond, func() { here() }, func() { from(p + 1) })
			return 0
		}
		return f.IfValue(t, cond, here, func() ID { return from(p + 1) })
	}
	return from(0)
}

// ArrayLength returns the element count of a storage buffer's runtime array (as
// bound: the descriptor range over the stride), a u32. Only a buffer bound whole
// has one: a split or addressed buffer's length is the kernel's to know.
func (f *Function) ArrayLength(b Buffer) ID {
	if b.Split() || b.Addressed() {
		f.m.failf("ArrayLength: buffer %d is not bound whole", b.Var)
		return 0
	}
	return f.Op(OpArrayLength, f.m.TypeU32(), uint32(b.Var), 0)
}
