package device

import (
	"fmt"
	"math"
)

// This file reads a SPIR-V module's resource interface, so that NewKernel can refuse a
// spec the module disagrees with: a pipeline layout that does not match the shader is
// undefined behaviour in the driver (lavapipe reads or writes outside what was bound,
// or dies with SIGBUS), not an error, and the validation layer only reports it when it
// is on.

// BindingKind is what a descriptor binding of a kernel holds.
type BindingKind int

const (
	BindingStorageBuffer BindingKind = iota + 1 // set 0, KernelSpec.Bindings
	BindingTexelBuffer                          // uniform texel buffer, KernelSpec.Texels
	BindingOther                                // anything the device does not bind (uniform buffer, image, sampler, ...)
)

func (k BindingKind) String() string {
	switch k {
	case BindingStorageBuffer:
		return "storage buffer"
	case BindingTexelBuffer:
		return "uniform texel buffer"
	case BindingOther:
		return "unsupported resource (not a storage or uniform texel buffer)"
	}
	return "nothing"
}

// Interface is what a SPIR-V module declares for one compute entry point.
type Interface struct {
	EntryPoint string
	// LocalSize is the workgroup size from OpExecutionMode LocalSize; zero when the
	// module sets it otherwise (LocalSizeId, a WorkgroupSize specialisation constant).
	LocalSize [3]uint32
	// Bindings maps each binding of descriptor set 0 to its kind.
	Bindings map[uint32]BindingKind
	// Sets lists descriptor sets other than 0 the module uses (the device binds set 0 only).
	Sets []uint32
	// PushConstantSize is the byte size of the push-constant block (0 without one).
	PushConstantSize int
}

// SPIR-V opcodes, decorations and enumerants the reader needs (SPIR-V spec, section 3).
const (
	opEntryPoint      = 15
	opExecutionMode   = 16
	opTypeInt         = 21
	opTypeFloat       = 22
	opTypeVector      = 23
	opTypeMatrix      = 24
	opTypeImage       = 25
	opTypeSampledImg  = 27
	opTypeArray       = 28
	opTypeRuntimeArr  = 29
	opTypeStruct      = 30
	opTypePointer     = 32
	opConstant        = 43
	opVariable        = 59
	opDecorate        = 71
	opMemberDecorate  = 72
	modelGLCompute    = 5
	modeLocalSize     = 17
	decBlock          = 2
	decBufferBlock    = 3
	decArrayStride    = 6
	decMatrixStride   = 7
	decBinding        = 33
	decDescriptorSet  = 34
	decOffset         = 35
	scUniformConstant = 0
	scUniform         = 2
	scPushConstant    = 9
	scStorageBuffer   = 12
	dimBuffer         = 5
)

// moduleTypes is what the reader keeps of a module's types, decorations and variables.
type moduleTypes struct {
	ops          map[uint32][]uint32 // type or constant id -> its instruction's words
	decorations  map[uint32]map[uint32]uint32
	memberOffset map[[2]uint32]uint32
	matrixStride map[[2]uint32]uint32
	variables    [][]uint32
}

// ReflectSPIRV reads the interface of the GLCompute entry point entry of a SPIR-V
// module. It errors (wrapping ErrInvalidArgument) on a module that is not SPIR-V, is
// truncated, lacks the entry point, or declares a type it cannot size.
func ReflectSPIRV(spirv []byte, entry string) (*Interface, error) {
	words, err := decodeSPIRV(spirv)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	in, err := reflectWords(words, entry)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	return in, nil
}

func reflectWords(words []uint32, entry string) (*Interface, error) {
	m := &moduleTypes{ops: map[uint32][]uint32{}, decorations: map[uint32]map[uint32]uint32{},
		memberOffset: map[[2]uint32]uint32{}, matrixStride: map[[2]uint32]uint32{}}
	in := &Interface{EntryPoint: entry, Bindings: map[uint32]BindingKind{}}
	entryID, found := uint32(0), false
	var modes [][]uint32
	for i := 5; i < len(words); i += int(words[i] >> 16) {
		inst := words[i : i+int(words[i]>>16)]
		op := inst[0] & 0xffff
		switch {
		case op == opEntryPoint && len(inst) >= 4 && inst[1] == modelGLCompute && !found:
			if literalString(inst[3:]) == entry {
				entryID, found = inst[2], true
			}
		case op == opExecutionMode && len(inst) >= 6 && inst[2] == modeLocalSize:
			modes = append(modes, inst)
		case op == opDecorate && len(inst) >= 3:
			m.decorate(inst)
		case op == opMemberDecorate && len(inst) >= 5 && inst[3] == decOffset:
			m.memberOffset[[2]uint32{inst[1], inst[2]}] = inst[4]
		case op == opMemberDecorate && len(inst) >= 5 && inst[3] == decMatrixStride:
			m.matrixStride[[2]uint32{inst[1], inst[2]}] = inst[4]
		case op == opVariable && len(inst) >= 4:
			m.variables = append(m.variables, inst)
		case (op >= opTypeInt && op <= opTypePointer || op == opConstant) && len(inst) >= 2:
			id := inst[1]
			if op == opConstant {
				if len(inst) < 4 {
					continue
				}
				id = inst[2]
			}
			m.ops[id] = inst
		}
	}
	if !found {
		return nil, fmt.Errorf("the SPIR-V has no GLCompute entry point %q", entry)
	}
	for _, mode := range modes {
		if mode[1] == entryID {
			in.LocalSize = [3]uint32{mode[3], mode[4], mode[5]}
		}
	}
	for _, v := range m.variables {
		if err := m.addVariable(in, v); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (m *moduleTypes) decorate(inst []uint32) {
	d := m.decorations[inst[1]]
	if d == nil {
		d = map[uint32]uint32{}
		m.decorations[inst[1]] = d
	}
	var arg uint32
	if len(inst) >= 4 {
		arg = inst[3]
	}
	d[inst[2]] = arg
}

func (m *moduleTypes) has(id, decoration uint32) bool {
	_, ok := m.decorations[id][decoration]
	return ok
}

// addVariable records a resource or push-constant variable of the module.
func (m *moduleTypes) addVariable(in *Interface, v []uint32) error {
	class, id := v[3], v[2]
	ptr := m.ops[v[1]]
	if len(ptr) < 4 || ptr[0]&0xffff != opTypePointer {
		return fmt.Errorf("variable %%%d: its type %%%d is not a pointer", id, v[1])
	}
	pointee := ptr[3]
	switch class {
	case scPushConstant:
		size, err := m.size(pointee, 0)
		if err != nil {
			return fmt.Errorf("push-constant block %%%d: %v", id, err)
		}
		in.PushConstantSize = max(in.PushConstantSize, size)
		return nil
	case scUniformConstant, scUniform, scStorageBuffer:
	default:
		return nil
	}
	binding, ok := m.decorations[id][decBinding]
	if !ok {
		return nil // not a descriptor (e.g. a sampler-less UniformConstant the driver ignores)
	}
	set := m.decorations[id][decDescriptorSet]
	if set != 0 {
		in.Sets = append(in.Sets, set)
		return nil
	}
	in.Bindings[binding] = m.kind(class, pointee)
	return nil
}

// kind classifies a descriptor variable by its storage class and pointee type.
func (m *moduleTypes) kind(class, pointee uint32) BindingKind {
	t := m.ops[pointee]
	switch {
	case class == scStorageBuffer && m.isOp(t, opTypeStruct):
		return BindingStorageBuffer
	case class == scUniform && m.isOp(t, opTypeStruct) && m.has(pointee, decBufferBlock):
		return BindingStorageBuffer // SPIR-V 1.0 style storage buffer
	case class == scUniformConstant && m.isOp(t, opTypeSampledImg) && len(t) >= 3:
		t = m.ops[t[2]]
	}
	// A uniform texel buffer: OpTypeImage with Dim Buffer and Sampled 1.
	if class == scUniformConstant && m.isOp(t, opTypeImage) && len(t) >= 9 && t[3] == dimBuffer && t[7] == 1 {
		return BindingTexelBuffer
	}
	return BindingOther
}

func (m *moduleTypes) isOp(inst []uint32, op uint32) bool {
	return len(inst) > 0 && inst[0]&0xffff == op
}

// size is the byte size of a type in an explicitly laid out block (Offset,
// ArrayStride and MatrixStride decorations; natural sizes otherwise).
func (m *moduleTypes) size(id uint32, depth int) (int, error) {
	if depth > 32 {
		return 0, fmt.Errorf("type %%%d nests deeper than 32", id)
	}
	t := m.ops[id]
	if len(t) == 0 {
		return 0, fmt.Errorf("type %%%d is not declared", id)
	}
	switch t[0] & 0xffff {
	case opTypeInt, opTypeFloat:
		if len(t) < 3 || t[2]%8 != 0 {
			return 0, fmt.Errorf("scalar type %%%d has no byte width", id)
		}
		return int(t[2] / 8), nil
	case opTypeVector, opTypeMatrix:
		if len(t) < 4 {
			return 0, fmt.Errorf("type %%%d is truncated", id)
		}
		e, err := m.size(t[2], depth+1)
		return e * int(t[3]), err
	case opTypeArray:
		return m.arraySize(id, t, depth)
	case opTypeStruct:
		return m.structSize(id, t, depth)
	case opTypeRuntimeArr:
		return 0, fmt.Errorf("type %%%d is a runtime array (no fixed size in a push-constant block)", id)
	}
	return 0, fmt.Errorf("type %%%d (opcode %d) cannot be sized", id, t[0]&0xffff)
}

func (m *moduleTypes) arraySize(id uint32, t []uint32, depth int) (int, error) {
	if len(t) < 4 {
		return 0, fmt.Errorf("array type %%%d is truncated", id)
	}
	n := m.ops[t[3]]
	if !m.isOp(n, opConstant) || len(n) < 4 {
		return 0, fmt.Errorf("array type %%%d: its length %%%d is not a constant", id, t[3])
	}
	stride, ok := m.decorations[id][decArrayStride]
	if !ok {
		e, err := m.size(t[2], depth+1)
		if err != nil {
			return 0, err
		}
		stride = uint32(e)
	}
	size := uint64(stride) * uint64(n[3])
	if size > math.MaxInt32 {
		return 0, fmt.Errorf("array type %%%d: %d bytes", id, size)
	}
	return int(size), nil
}

func (m *moduleTypes) structSize(id uint32, t []uint32, depth int) (int, error) {
	end, offset := 0, 0
	for i, member := range t[2:] {
		size, err := m.size(member, depth+1)
		if err != nil {
			return 0, fmt.Errorf("struct %%%d member %d: %v", id, i, err)
		}
		if off, ok := m.memberOffset[[2]uint32{id, uint32(i)}]; ok {
			offset = int(off)
		}
		end = max(end, offset+size)
		offset += size
	}
	return end, nil
}

// checkInterface compares what the module declares with the spec, naming the first
// binding (or the push-constant block) where they disagree: every binding the module
// declares must be in the spec with the same kind, and the module's push-constant block
// must fit in the bytes the spec passes. The spec may have more (bindings the module
// does not declare, push bytes past its block): Vulkan allows a layout that is a
// superset of the shader's interface, and the extra is never read.
func checkInterface(in *Interface, spec KernelSpec) error {
	if len(in.Sets) > 0 {
		return fmt.Errorf("the module uses descriptor set %d; kernels bind set 0 only", in.Sets[0])
	}
	want := spec.Bindings + len(spec.Texels)
	for b := range in.Bindings {
		if int(b) >= want {
			return fmt.Errorf("binding %d: the module declares a %v, the spec has nothing there (%d storage, %d uniform texel buffers)",
				b, in.Bindings[b], spec.Bindings, len(spec.Texels))
		}
	}
	for b := 0; b < want; b++ {
		wantKind := BindingStorageBuffer
		if b >= spec.Bindings {
			wantKind = BindingTexelBuffer
		}
		got, ok := in.Bindings[uint32(b)]
		switch {
		case !ok:
			// A layout may declare bindings the shader does not use (Vulkan allows a
			// superset); the dispatch binds a buffer there that the kernel never reads.
		case got != wantKind:
			return fmt.Errorf("binding %d: the spec has a %v, the module declares a %v", b, wantKind, got)
		}
	}
	if in.PushConstantSize > spec.PushConstantSize {
		return fmt.Errorf("push constants: the module's block is %d bytes, the spec passes %d", in.PushConstantSize, spec.PushConstantSize)
	}
	return nil
}
