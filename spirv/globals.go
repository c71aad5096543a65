package spirv

import (
	"fmt"
	"strings"
)

// Variable declares a module-scope variable of type pointee in storage class
// sc and returns its id (its type is the pointer). Function-local variables
// are made with Function.Var instead.
func (m *Module) Variable(sc StorageClass, pointee ID, name string) ID {
	if sc == StorageClassFunction {
		m.failf("Variable: Function storage belongs in Function.Var")
		return 0
	}
	ptr := m.TypePointer(sc, pointee)
	id := m.NewID()
	m.valueTypes[id] = ptr
	m.globals.add(OpVariable, uint32(ptr), uint32(id), uint32(sc))
	m.globalVars = append(m.globalVars, id)
	m.Name(id, name)
	return id
}

// PrivateTable declares a Private variable of type t initialised to the constant
// init, for a table read with dynamic indices: drivers keep one copy in constant
// memory rather than storing the table into every invocation's Function variable.
func (m *Module) PrivateTable(t, init ID, name string) ID {
	ptr := m.TypePointer(StorageClassPrivate, t)
	id := m.NewID()
	m.valueTypes[id] = ptr
	m.globals.add(OpVariable, uint32(ptr), uint32(id), uint32(StorageClassPrivate), uint32(init))
	m.globalVars = append(m.globalVars, id)
	m.Name(id, name)
	return id
}

// Access is a set of memory qualifiers for a buffer binding.
type Access uint8

// Access flags. The zero value is read-write with no qualifier.
const (
	ReadOnly  Access = 1 << iota // NonWritable
	WriteOnly                    // NonReadable
	Restrict                     // no other binding aliases this one
	Coherent                     // writes visible to other invocations without a barrier's help
)

func (m *Module) decorateAccess(v ID, access Access) {
	if access&ReadOnly != 0 {
		m.Decorate(v, DecorationNonWritable)
	}
	if access&WriteOnly != 0 {
		m.Decorate(v, DecorationNonReadable)
	}
	if access&Restrict != 0 {
		m.Decorate(v, DecorationRestrict)
	}
	if access&Coherent != 0 {
		m.Decorate(v, DecorationCoherent)
	}
}

// needStorageClass adds the extension that the StorageBuffer class needs
// before SPIR-V 1.3.
func (m *Module) needStorageClass(sc StorageClass) {
	if sc == StorageClassStorageBuffer {
		m.extensionBefore(Version1_3, "SPV_KHR_storage_buffer_storage_class")
	}
}

// needNarrowStorage declares the 8- and 16-bit storage capabilities (and
// their extensions before they became core) for every narrow scalar inside t
// stored in a block of class sc.
func (m *Module) needNarrowStorage(t ID, sc StorageClass) {
	switch w := m.narrowestWidth(t); {
	case w == 8 && sc == StorageClassStorageBuffer:
		m.Capability(CapabilityStorageBuffer8BitAccess)
		m.extensionBefore(Version1_5, "SPV_KHR_8bit_storage")
	case w == 8 && sc == StorageClassPushConstant:
		m.Capability(CapabilityStoragePushConstant8)
		m.extensionBefore(Version1_5, "SPV_KHR_8bit_storage")
	case w == 16 && sc == StorageClassStorageBuffer:
		m.Capability(CapabilityStorageBuffer16BitAccess)
		m.extensionBefore(Version1_3, "SPV_KHR_16bit_storage")
	case w == 16 && sc == StorageClassPushConstant:
		m.Capability(CapabilityStoragePushConstant16)
		m.extensionBefore(Version1_3, "SPV_KHR_16bit_storage")
	}
}

// narrowestWidth is the smallest scalar width inside t (32 if none is narrower).
func (m *Module) narrowestWidth(t ID) int {
	info := m.typeInfoOf(t)
	switch info.op {
	case OpTypeInt, OpTypeFloat:
		return info.width
	case OpTypeVector, OpTypeArray, OpTypeRuntimeArray:
		return m.narrowestWidth(info.elem)
	case OpTypeStruct:
		w := 32
		for _, mem := range info.members {
			w = min(w, m.narrowestWidth(mem))
		}
		return w
	}
	return 32
}

// Block is a Block-decorated struct variable: push constants, or a storage
// buffer with several members.
type Block struct {
	Var     ID
	Type    ID // the struct type
	Members []ID
	Storage StorageClass
}

// PushConstants declares the push-constant block with the given members laid
// out by std430 (a kernel's scalars: lengths, offsets, strides).
func (m *Module) PushConstants(name string, members ...Member) Block {
	return m.block(name, StorageClassPushConstant, members)
}

// StorageBlock declares a storage buffer whose block has several members (for
// example a header of scalars followed by a runtime array), at (set, binding).
func (m *Module) StorageBlock(name string, set, binding uint32, access Access, members ...Member) Block {
	m.needStorageClass(StorageClassStorageBuffer)
	b := m.block(name, StorageClassStorageBuffer, members)
	m.Decorate(b.Var, DecorationDescriptorSet, set)
	m.Decorate(b.Var, DecorationBinding, binding)
	m.decorateAccess(b.Var, access)
	return b
}

func (m *Module) block(name string, sc StorageClass, members []Member) Block {
	types := make([]ID, len(members))
	for i, mem := range members {
		types[i] = mem.Type
		m.needNarrowStorage(mem.Type, sc)
	}
	t := m.TypeBlock(members...)
	m.Name(t, name+"_block")
	return Block{Var: m.Variable(sc, t, name), Type: t, Members: types, Storage: sc}
}

// SharedArray declares a Workgroup (shared memory) array of n elements.
func (m *Module) SharedArray(name string, elem ID, n uint32) ID {
	return m.Variable(StorageClassWorkgroup, m.TypeArray(elem, n), name)
}

// builtinTypes gives the type each supported compute built-in has in Vulkan.
var builtinTypes = map[BuiltIn]bool{ // true: uvec3, false: u32
	BuiltInGlobalInvocationId:        true,
	BuiltInLocalInvocationId:         true,
	BuiltInWorkgroupId:               true,
	BuiltInNumWorkgroups:             true,
	BuiltInLocalInvocationIndex:      false,
	BuiltInSubgroupSize:              false,
	BuiltInSubgroupLocalInvocationId: false,
	BuiltInSubgroupId:                false,
	BuiltInNumSubgroups:              false,
}

// BuiltIn returns the Input variable for a compute built-in, declaring it
// (with its decoration and any capability) on first use.
func (m *Module) BuiltIn(b BuiltIn) ID {
	if v, ok := m.builtins[b]; ok {
		return v
	}
	vec3, ok := builtinTypes[b]
	if !ok {
		m.failf("built-in %s is not a supported compute input", b)
		return 0
	}
	t := m.TypeU32()
	if vec3 {
		t = m.TypeVector(t, 3)
	}
	switch b {
	case BuiltInSubgroupSize, BuiltInSubgroupLocalInvocationId, BuiltInSubgroupId, BuiltInNumSubgroups:
		m.Capability(CapabilityGroupNonUniform)
	}
	v := m.Variable(StorageClassInput, t, b.String())
	m.Decorate(v, DecorationBuiltIn, uint32(b))
	m.builtins[b] = v
	return v
}

// SpecConstInt declares an integer specialization constant with SpecId id.
func (m *Module) SpecConstInt(t ID, specID uint32, def int64) ID {
	w := m.intWidth(t)
	if w == 0 {
		return 0
	}
	words := []uint32{uint32(def)}
	if w == 64 {
		words = append(words, uint32(uint64(def)>>32))
	}
	return m.specConst(OpSpecConstant, t, specID, words...)
}

// SpecConstFloat declares a float specialization constant.
func (m *Module) SpecConstFloat(t ID, specID uint32, def float64) ID {
	w := m.floatWidth(t)
	if w == 0 {
		return 0
	}
	bits := floatBits(w, def)
	words := []uint32{uint32(bits)}
	if w == 64 {
		words = append(words, uint32(bits>>32))
	}
	return m.specConst(OpSpecConstant, t, specID, words...)
}

// SpecConstBool declares a boolean specialization constant.
func (m *Module) SpecConstBool(specID uint32, def bool) ID {
	op := OpSpecConstantFalse
	if def {
		op = OpSpecConstantTrue
	}
	return m.specConst(op, m.TypeBool(), specID)
}

func (m *Module) specConst(op Op, t ID, specID uint32, words ...uint32) ID {
	if _, dup := m.specIDs[specID]; dup {
		m.failf("SpecId %d declared twice", specID)
		return 0
	}
	id := m.NewID()
	m.valueTypes[id] = t
	m.globals.add(op, append([]uint32{uint32(t), uint32(id)}, words...)...)
	m.Decorate(id, DecorationSpecId, specID)
	m.specIDs[specID] = id
	return id
}

// WorkgroupSizeSpec makes the workgroup size specializable: three u32 spec
// constants with SpecIds ids[0..2] (defaults def), combined into the uvec3
// decorated BuiltIn WorkgroupSize, which overrides every LocalSize mode. It
// returns the composite (the size as a value) and the three components.
func (m *Module) WorkgroupSizeSpec(ids, def [3]uint32) (size ID, xyz [3]ID) {
	u32 := m.TypeU32()
	for i := range xyz {
		xyz[i] = m.SpecConstInt(u32, ids[i], int64(def[i]))
		m.Name(xyz[i], fmt.Sprint("local_size_", "xyz"[i:i+1]))
	}
	t := m.TypeVector(u32, 3)
	size = m.NewID()
	m.valueTypes[size] = t
	m.globals.add(OpSpecConstantComposite, uint32(t), uint32(size), uint32(xyz[0]), uint32(xyz[1]), uint32(xyz[2]))
	m.Decorate(size, DecorationBuiltIn, uint32(BuiltInWorkgroupSize))
	return size, xyz
}

// identifier turns a type name such as "vec4<f32>" into "vec4_f32" for use
// in debug names.
func identifier(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s), "_")
}
