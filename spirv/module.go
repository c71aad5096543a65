package spirv

import (
	"fmt"
	"sort"
)

// ID is a SPIR-V result id. 0 is never a valid id; builder methods return it
// after a recorded error.
type ID uint32

// MagicNumber opens every SPIR-V module.
const MagicNumber = 0x07230203

// Generator is the header's generator word: tool id 0 ("unregistered") in the
// high half, the builder's own version in the low half.
const Generator = 0x00000001

// Module is a SPIR-V module under construction. Its zero value is not usable;
// call NewModule.
type Module struct {
	version Version
	nextID  ID
	err     error

	capabilities []Capability
	extensions   []string
	imports      section // OpExtInstImport
	glslImport   ID
	entryPoints  []*entryPoint
	modes        section // OpExecutionMode(Id)
	debug        section // OpName, OpMemberName
	annotations  section // OpDecorate, OpMemberDecorate
	globals      section // types, constants and global variables, in order
	functions    []*Function

	types      map[ID]*typeInfo
	valueTypes map[ID]ID      // result id -> its type id
	constants  map[ID]uint64  // id -> value bits of scalar OpConstant, for struct indices
	keys       map[string]ID  // de-duplication of types, constants and decorations
	builtins   map[BuiltIn]ID // BuiltIn -> its Input variable
	specIDs    map[uint32]ID  // SpecId -> the spec constant that owns it
	globalVars []ID           // module-scope variables, for entry point interfaces
	names      map[ID]bool    // ids that already have an OpName
}

// section is a run of encoded instructions.
type section []uint32

func (s *section) add(op Op, operands ...uint32) {
	*s = append(*s, uint32(len(operands)+1)<<16|uint32(op))
	*s = append(*s, operands...)
}

// NewModule starts a module for the given SPIR-V version. The Shader
// capability and the Logical GLSL450 memory model are implied: every module is
// a Vulkan compute module.
func NewModule(v Version) *Module {
	m := &Module{
		version:    v,
		nextID:     1,
		types:      map[ID]*typeInfo{},
		valueTypes: map[ID]ID{},
		constants:  map[ID]uint64{},
		keys:       map[string]ID{},
		builtins:   map[BuiltIn]ID{},
		specIDs:    map[uint32]ID{},
		names:      map[ID]bool{},
	}
	m.Capability(CapabilityShader)
	return m
}

// Version returns the SPIR-V version the module is built for.
func (m *Module) Version() Version { return m.version }

// Err returns the first error recorded while building, or nil.
func (m *Module) Err() error { return m.err }

// failf records the first error; later ones are usually consequences of it.
func (m *Module) failf(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("spirv: "+format, args...)
	}
}

// NewID allocates a fresh result id.
func (m *Module) NewID() ID {
	id := m.nextID
	m.nextID++
	return id
}

// Bound is one more than the largest id allocated so far.
func (m *Module) Bound() uint32 { return uint32(m.nextID) }

// Capability declares a capability once, however often it is asked for.
func (m *Module) Capability(c Capability) {
	for _, have := range m.capabilities {
		if have == c {
			return
		}
	}
	m.capabilities = append(m.capabilities, c)
}

// HasCapability reports whether c has been declared.
func (m *Module) HasCapability(c Capability) bool {
	for _, have := range m.capabilities {
		if have == c {
			return true
		}
	}
	return false
}

// Extension declares a SPIR-V extension (e.g. "SPV_KHR_16bit_storage") once.
func (m *Module) Extension(name string) {
	for _, have := range m.extensions {
		if have == name {
			return
		}
	}
	m.extensions = append(m.extensions, name)
}

// extensionBefore declares an extension only when the module's version
// predates the one in which it became core.
func (m *Module) extensionBefore(core Version, name string) {
	if m.version < core {
		m.Extension(name)
	}
}

// GLSLImport returns the id of the GLSL.std.450 extended instruction set,
// importing it on first use.
func (m *Module) GLSLImport() ID {
	if m.glslImport == 0 {
		m.glslImport = m.NewID()
		m.imports.add(OpExtInstImport, append([]uint32{uint32(m.glslImport)}, stringWords("GLSL.std.450")...)...)
	}
	return m.glslImport
}

// Name attaches a debug name (OpName) to id. The first name given wins, so
// shared, de-duplicated types keep a stable name.
func (m *Module) Name(id ID, name string) {
	if id == 0 || name == "" || m.names[id] {
		return
	}
	m.names[id] = true
	m.debug.add(OpName, append([]uint32{uint32(id)}, stringWords(name)...)...)
}

// MemberName names member i of a struct type.
func (m *Module) MemberName(structType ID, member uint32, name string) {
	key := fmt.Sprint("membername", structType, member)
	if _, done := m.keys[key]; done || name == "" {
		return
	}
	m.keys[key] = structType
	m.debug.add(OpMemberName, append([]uint32{uint32(structType), member}, stringWords(name)...)...)
}

// Decorate adds OpDecorate id dec args... once; repeating an identical
// decoration is a no-op so that helpers over shared types stay idempotent.
func (m *Module) Decorate(id ID, dec Decoration, args ...uint32) {
	key := fmt.Sprint("decorate", id, dec, args)
	if _, done := m.keys[key]; done {
		return
	}
	m.keys[key] = id
	m.annotations.add(OpDecorate, append([]uint32{uint32(id), uint32(dec)}, args...)...)
}

// MemberDecorate adds OpMemberDecorate structType member dec args... once.
func (m *Module) MemberDecorate(structType ID, member uint32, dec Decoration, args ...uint32) {
	key := fmt.Sprint("memberdecorate", structType, member, dec, args)
	if _, done := m.keys[key]; done {
		return
	}
	m.keys[key] = structType
	m.annotations.add(OpMemberDecorate, append([]uint32{uint32(structType), member, uint32(dec)}, args...)...)
}

// TypeOf returns the type id of a value id (a constant, variable, parameter
// or instruction result). For a variable it is the pointer type.
func (m *Module) TypeOf(value ID) ID {
	t, ok := m.valueTypes[value]
	if !ok {
		m.failf("id %d has no known type (not a value made by this module)", value)
	}
	return t
}

// stringWords encodes a literal string: UTF-8, NUL-terminated, padded to a
// whole number of little-endian words.
func stringWords(s string) []uint32 {
	b := append([]byte(s), 0)
	words := make([]uint32, (len(b)+3)/4)
	for i, c := range b {
		words[i/4] |= uint32(c) << (8 * (i % 4))
	}
	return words
}

// Assemble encodes the module. It fails if any builder call recorded an
// error or a function is left without a terminator where one cannot be
// implied.
func (m *Module) Assemble() ([]uint32, error) {
	for _, f := range m.functions {
		f.finish()
	}
	if m.err != nil {
		return nil, m.err
	}
	if len(m.entryPoints) == 0 {
		return nil, fmt.Errorf("spirv: module has no entry point")
	}
	out := []uint32{MagicNumber, uint32(m.version), Generator, m.Bound(), 0}
	var head section
	for _, c := range m.sortedCapabilities() {
		head.add(OpCapability, uint32(c))
	}
	for _, e := range m.extensions {
		head.add(OpExtension, stringWords(e)...)
	}
	out = append(out, head...)
	out = append(out, m.imports...)
	var mode section
	mode.add(OpMemoryModel, uint32(m.addressingModel()), uint32(MemoryModelGLSL450))
	for _, ep := range m.entryPoints {
		mode.add(OpEntryPoint, ep.operands(m)...)
	}
	out = append(out, mode...)
	out = append(out, m.modes...)
	out = append(out, m.debug...)
	out = append(out, m.annotations...)
	out = append(out, m.globals...)
	for _, f := range m.functions {
		out = append(out, f.encode()...)
	}
	return out, nil
}

// sortedCapabilities lists capabilities in numeric order so the binary does
// not depend on the order in which emission happened to need them.
func (m *Module) sortedCapabilities() []Capability {
	caps := append([]Capability(nil), m.capabilities...)
	sort.Slice(caps, func(i, j int) bool { return caps[i] < caps[j] })
	return caps
}

// Bytes returns the little-endian byte form of a SPIR-V binary, as stored in
// .spv files and passed to vkCreateShaderModule.
func Bytes(words []uint32) []byte {
	b := make([]byte, 4*len(words))
	for i, w := range words {
		b[4*i] = byte(w)
		b[4*i+1] = byte(w >> 8)
		b[4*i+2] = byte(w >> 16)
		b[4*i+3] = byte(w >> 24)
	}
	return b
}

// Words converts little-endian bytes back to words. It fails on a length that
// is not a multiple of four or a missing magic number.
func Words(b []byte) ([]uint32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("spirv: %d bytes is not a whole number of words", len(b))
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
	}
	if len(w) == 0 || w[0] != MagicNumber {
		return nil, fmt.Errorf("spirv: missing magic number 0x%08x", MagicNumber)
	}
	return w, nil
}

// addressingModel is Logical, or PhysicalStorageBuffer64 once the module uses
// PhysicalStorageBuffer pointers (buffers reached by device address).
func (m *Module) addressingModel() AddressingModel {
	if m.HasCapability(CapabilityPhysicalStorageBufferAddresses) {
		return AddressingModelPhysicalStorageBuffer64
	}
	return AddressingModelLogical
}
