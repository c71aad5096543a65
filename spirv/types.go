package spirv

import (
	"fmt"
	"strings"
)

// typeInfo is what the builder remembers about a type id: enough to infer
// result types, compute explicit layouts and add the capabilities a type
// implies.
type typeInfo struct {
	op      Op
	width   int  // bits, for int and float
	signed  bool // for int
	elem    ID   // vector, array, runtime array, pointer pointee
	count   uint32
	stride  uint32 // ArrayStride of an explicitly laid-out array, else 0
	members []ID   // struct
	offsets []uint32
	storage StorageClass // pointer
	ret     ID           // function
	params  []ID
}

// Member is one member of a struct type with explicit layout.
type Member struct {
	Name string
	Type ID
}

// typeDecl returns the id cached under key, or declares a new type: it
// allocates the id, records info and emits info.op with the operands that
// follow the result id.
func (m *Module) typeDecl(key string, info *typeInfo, operands ...uint32) ID {
	if id, ok := m.keys[key]; ok {
		return id
	}
	id := m.NewID()
	m.keys[key] = id
	m.types[id] = info
	m.globals.add(info.op, append([]uint32{uint32(id)}, operands...)...)
	return id
}

// typeInfoOf returns the info of a type id, recording an error (and returning
// an empty info) if t is not a type.
func (m *Module) typeInfoOf(t ID) *typeInfo {
	if info, ok := m.types[t]; ok {
		return info
	}
	m.failf("id %d is not a type", t)
	return &typeInfo{}
}

// TypeVoid returns the void type.
func (m *Module) TypeVoid() ID { return m.typeDecl("void", &typeInfo{op: OpTypeVoid}) }

// TypeBool returns the boolean type.
func (m *Module) TypeBool() ID { return m.typeDecl("bool", &typeInfo{op: OpTypeBool}) }

// TypeInt returns the integer type of width bits (8, 16, 32, 64) and the
// given signedness, declaring the capability a non-32-bit width needs.
func (m *Module) TypeInt(width int, signed bool) ID {
	switch width {
	case 8:
		m.Capability(CapabilityInt8)
	case 16:
		m.Capability(CapabilityInt16)
	case 32:
	case 64:
		m.Capability(CapabilityInt64)
	default:
		m.failf("integer width %d is not 8, 16, 32 or 64", width)
		return 0
	}
	s := uint32(0)
	if signed {
		s = 1
	}
	return m.typeDecl(fmt.Sprint("int", width, signed), &typeInfo{op: OpTypeInt, width: width, signed: signed}, uint32(width), s)
}

// TypeFloat returns the float type of width bits (16, 32, 64).
func (m *Module) TypeFloat(width int) ID {
	switch width {
	case 16:
		m.Capability(CapabilityFloat16)
	case 32:
	case 64:
		m.Capability(CapabilityFloat64)
	default:
		m.failf("float width %d is not 16, 32 or 64", width)
		return 0
	}
	return m.typeDecl(fmt.Sprint("float", width), &typeInfo{op: OpTypeFloat, width: width}, uint32(width))
}

// Shorthands for the common scalar types.
func (m *Module) TypeU32() ID { return m.TypeInt(32, false) }
func (m *Module) TypeI32() ID { return m.TypeInt(32, true) }
func (m *Module) TypeF32() ID { return m.TypeFloat(32) }

// TypeVector returns the vector of n (2, 3, 4) components of a scalar type.
func (m *Module) TypeVector(elem ID, n int) ID {
	if n < 2 || n > 4 {
		m.failf("vector size %d is not 2, 3 or 4", n)
		return 0
	}
	if !m.isScalar(elem) {
		m.failf("vector component %d is not a scalar type", elem)
		return 0
	}
	return m.typeDecl(fmt.Sprint("vec", elem, n), &typeInfo{op: OpTypeVector, elem: elem, count: uint32(n)}, uint32(elem), uint32(n))
}

// TypeArray returns the array of n elements with no explicit layout, for
// Workgroup and Function storage.
func (m *Module) TypeArray(elem ID, n uint32) ID { return m.array(elem, n, 0) }

// TypeArrayStride returns the array of n elements decorated ArrayStride, for
// StorageBuffer, Uniform and PushConstant storage.
func (m *Module) TypeArrayStride(elem ID, n, stride uint32) ID {
	if stride == 0 {
		m.failf("array stride must be positive")
		return 0
	}
	return m.array(elem, n, stride)
}

func (m *Module) array(elem ID, n, stride uint32) ID {
	m.typeInfoOf(elem)
	if n == 0 {
		m.failf("array length must be positive")
		return 0
	}
	length := m.ConstUint(m.TypeU32(), uint64(n))
	key := fmt.Sprint("array", elem, n, stride)
	id := m.typeDecl(key, &typeInfo{op: OpTypeArray, elem: elem, count: n, stride: stride}, uint32(elem), uint32(length))
	if stride != 0 {
		m.Decorate(id, DecorationArrayStride, stride)
	}
	return id
}

// TypeRuntimeArray returns the runtime-sized array of elem with the given
// ArrayStride (a runtime array only lives in explicitly laid-out blocks).
func (m *Module) TypeRuntimeArray(elem ID, stride uint32) ID {
	m.typeInfoOf(elem)
	if stride == 0 {
		m.failf("runtime array stride must be positive")
		return 0
	}
	id := m.typeDecl(fmt.Sprint("rtarray", elem, stride), &typeInfo{op: OpTypeRuntimeArray, elem: elem, stride: stride}, uint32(elem))
	m.Decorate(id, DecorationArrayStride, stride)
	return id
}

// TypeStruct returns a struct of the given member types with no layout
// decorations. Identical member lists share one id.
func (m *Module) TypeStruct(members ...ID) ID {
	return m.structType("struct", members, nil)
}

// TypeBlock returns a Block-decorated struct whose members are laid out by
// std430 rules (Offset decorations), the form Vulkan needs for storage
// buffers and push constants. Blocks with the same member types share an id;
// member names are attached on first declaration.
func (m *Module) TypeBlock(members ...Member) ID {
	types := make([]ID, len(members))
	for i, mem := range members {
		types[i] = mem.Type
	}
	for _, t := range types {
		m.checkExplicitLayout(t)
	}
	offsets := m.std430Offsets(types)
	id := m.structType("block", types, offsets)
	m.Decorate(id, DecorationBlock)
	for i, mem := range members {
		m.MemberDecorate(id, uint32(i), DecorationOffset, offsets[i])
		m.MemberName(id, uint32(i), mem.Name)
	}
	return id
}

func (m *Module) structType(kind string, members []ID, offsets []uint32) ID {
	ops := make([]uint32, len(members))
	for i, t := range members {
		m.typeInfoOf(t)
		ops[i] = uint32(t)
	}
	key := fmt.Sprint(kind, members)
	return m.typeDecl(key, &typeInfo{op: OpTypeStruct, members: members, offsets: offsets}, ops...)
}

// TypePointer returns the pointer to pointee in storage class sc.
func (m *Module) TypePointer(sc StorageClass, pointee ID) ID {
	m.typeInfoOf(pointee)
	if sc == StorageClassPhysicalStorageBuffer {
		m.Capability(CapabilityPhysicalStorageBufferAddresses)
		m.extensionBefore(Version1_5, "SPV_KHR_physical_storage_buffer")
	}
	return m.typeDecl(fmt.Sprint("ptr", sc, pointee), &typeInfo{op: OpTypePointer, storage: sc, elem: pointee}, uint32(sc), uint32(pointee))
}

// TypeFunction returns the function type ret(params...).
func (m *Module) TypeFunction(ret ID, params ...ID) ID {
	ops := []uint32{uint32(ret)}
	for _, p := range params {
		ops = append(ops, uint32(p))
	}
	key := fmt.Sprint("fn", ret, params)
	return m.typeDecl(key, &typeInfo{op: OpTypeFunction, ret: ret, params: params}, ops...)
}

// Type predicates. They look at the scalar component of vectors, so that
// emitters can choose an opcode by one test for scalars and vectors alike.

func (m *Module) isScalar(t ID) bool {
	info, ok := m.types[t]
	return ok && (info.op == OpTypeInt || info.op == OpTypeFloat || info.op == OpTypeBool)
}

// ScalarType returns the component type of a vector, or t itself.
func (m *Module) ScalarType(t ID) ID {
	if info := m.typeInfoOf(t); info.op == OpTypeVector {
		return info.elem
	}
	return t
}

// VectorSize returns the component count of a vector type, or 1 for others.
func (m *Module) VectorSize(t ID) int {
	if info := m.typeInfoOf(t); info.op == OpTypeVector {
		return int(info.count)
	}
	return 1
}

// IsFloat reports whether t is a float scalar or vector type.
func (m *Module) IsFloat(t ID) bool { return m.typeInfoOf(m.ScalarType(t)).op == OpTypeFloat }

// IsInt reports whether t is an integer scalar or vector type.
func (m *Module) IsInt(t ID) bool { return m.typeInfoOf(m.ScalarType(t)).op == OpTypeInt }

// IsSigned reports whether t is a signed integer scalar or vector type.
func (m *Module) IsSigned(t ID) bool {
	info := m.typeInfoOf(m.ScalarType(t))
	return info.op == OpTypeInt && info.signed
}

// IsBool reports whether t is a bool scalar or vector type.
func (m *Module) IsBool(t ID) bool { return m.typeInfoOf(m.ScalarType(t)).op == OpTypeBool }

// Width returns the bit width of a numeric scalar or vector component type.
func (m *Module) Width(t ID) int { return m.typeInfoOf(m.ScalarType(t)).width }

// Pointee returns the type a pointer type points to.
func (m *Module) Pointee(ptr ID) ID {
	info := m.typeInfoOf(ptr)
	if info.op != OpTypePointer {
		m.failf("type %d is not a pointer", ptr)
		return 0
	}
	return info.elem
}

// StorageClassOf returns the storage class of a pointer type.
func (m *Module) StorageClassOf(ptr ID) StorageClass { return m.typeInfoOf(ptr).storage }

// boolLike returns bool, or the bool vector with as many components as t.
func (m *Module) boolLike(t ID) ID {
	if n := m.VectorSize(t); n > 1 {
		return m.TypeVector(m.TypeBool(), n)
	}
	return m.TypeBool()
}

// TypeName spells a type for error messages and debug names: "f32",
// "vec4<u32>", "ptr<StorageBuffer, f32>".
func (m *Module) TypeName(t ID) string {
	info, ok := m.types[t]
	if !ok {
		return fmt.Sprintf("<not a type %d>", t)
	}
	switch info.op {
	case OpTypeVoid:
		return "void"
	case OpTypeBool:
		return "bool"
	case OpTypeInt:
		if info.signed {
			return fmt.Sprint("i", info.width)
		}
		return fmt.Sprint("u", info.width)
	case OpTypeFloat:
		return fmt.Sprint("f", info.width)
	case OpTypeVector:
		return fmt.Sprintf("vec%d<%s>", info.count, m.TypeName(info.elem))
	case OpTypeArray:
		return fmt.Sprintf("[%d]%s", info.count, m.TypeName(info.elem))
	case OpTypeRuntimeArray:
		return "[]" + m.TypeName(info.elem)
	case OpTypePointer:
		return fmt.Sprintf("ptr<%s, %s>", info.storage, m.TypeName(info.elem))
	case OpTypeImage:
		return fmt.Sprintf("imagebuffer<%s>", m.TypeName(info.elem))
	case OpTypeStruct:
		parts := make([]string, len(info.members))
		for i, mem := range info.members {
			parts[i] = m.TypeName(mem)
		}
		return "struct{" + strings.Join(parts, ", ") + "}"
	}
	return info.op.String()
}
