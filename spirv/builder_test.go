package spirv

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTypesAreDeduplicated(t *testing.T) {
	m := NewModule(Version1_3)
	u32 := m.TypeInt(32, false)
	assert.Equal(t, u32, m.TypeU32())
	assert.NotEqual(t, u32, m.TypeI32(), "signedness makes a distinct type")
	assert.Equal(t, m.TypeFloat(32), m.TypeF32())
	assert.Equal(t, m.TypeVector(u32, 3), m.TypeVector(u32, 3))
	assert.NotEqual(t, m.TypeVector(u32, 3), m.TypeVector(u32, 4))
	assert.Equal(t, m.TypeArray(u32, 8), m.TypeArray(u32, 8))
	assert.NotEqual(t, m.TypeArray(u32, 8), m.TypeArrayStride(u32, 8, 4), "a laid-out array is a distinct type")
	assert.Equal(t, m.TypeRuntimeArray(u32, 4), m.TypeRuntimeArray(u32, 4))
	assert.Equal(t, m.TypeStruct(u32, m.TypeF32()), m.TypeStruct(u32, m.TypeF32()))
	assert.NotEqual(t, m.TypeStruct(u32), m.TypeBlock(Member{Type: u32}), "a Block is distinct from a plain struct")
	assert.Equal(t, m.TypePointer(StorageClassWorkgroup, u32), m.TypePointer(StorageClassWorkgroup, u32))
	assert.NotEqual(t, m.TypePointer(StorageClassWorkgroup, u32), m.TypePointer(StorageClassFunction, u32))
	assert.Equal(t, m.TypeFunction(m.TypeVoid(), u32), m.TypeFunction(m.TypeVoid(), u32))
	assert.Equal(t, m.TypeBool(), m.TypeBool())
	require.NoError(t, m.Err())

	// Each type is declared once in the binary: count OpTypeInt 32 0.
	countDecls := 0
	for i := 0; i < len(m.globals); i += int(m.globals[i] >> 16) {
		if Op(m.globals[i]&0xffff) == OpTypeVector {
			countDecls++
		}
	}
	assert.Equal(t, 2, countDecls, "vec3 and vec4 of u32, each once")
}

func TestConstantsAreDeduplicated(t *testing.T) {
	m := NewModule(Version1_3)
	assert.Equal(t, m.U32(7), m.U32(7))
	assert.Equal(t, m.U32(7), m.ConstUint(m.TypeU32(), 7))
	assert.NotEqual(t, m.U32(7), m.I32(7), "same value, different type")
	assert.Equal(t, m.F32(1.5), m.ConstFloat(m.TypeF32(), 1.5))
	assert.NotEqual(t, m.F32(0), m.F32(float32(math.Copysign(0, -1))), "+0 and -0 differ")
	assert.Equal(t, m.ConstBool(true), m.ConstBool(true))
	assert.NotEqual(t, m.ConstBool(true), m.ConstBool(false))
	v := m.TypeVector(m.TypeF32(), 4)
	assert.Equal(t, m.ConstOf(v, 1), m.ConstComposite(v, m.F32(1), m.F32(1), m.F32(1), m.F32(1)))
	assert.Equal(t, m.ConstNull(v), m.ConstNull(v))
	require.NoError(t, m.Err())
}

// constWords returns the value words of constant c as emitted.
func constWords(m *Module, c ID) []uint32 {
	for i := 0; i < len(m.globals); i += int(m.globals[i] >> 16) {
		n := int(m.globals[i] >> 16)
		if Op(m.globals[i]&0xffff) == OpConstant && ID(m.globals[i+2]) == c {
			return m.globals[i+3 : i+n]
		}
	}
	return nil
}

func TestConstantEncoding(t *testing.T) {
	m := NewModule(Version1_3)
	i8, u8, i16 := m.TypeInt(8, true), m.TypeInt(8, false), m.TypeInt(16, true)
	i64, u64 := m.TypeInt(64, true), m.TypeInt(64, false)
	f16, f64 := m.TypeFloat(16), m.TypeFloat(64)
	cases := []struct {
		name string
		c    ID
		want []uint32
	}{
		{"i8 -1 sign-extends", m.ConstInt(i8, -1), []uint32{0xffffffff}},
		{"u8 255 zero-extends", m.ConstUint(u8, 255), []uint32{0xff}},
		{"u8 from -1 wraps", m.ConstInt(u8, -1), []uint32{0xff}},
		{"i16 -2", m.ConstInt(i16, -2), []uint32{0xfffffffe}},
		{"i64 -1", m.ConstInt(i64, -1), []uint32{0xffffffff, 0xffffffff}},
		{"u64 2^40+3", m.ConstUint(u64, 1<<40+3), []uint32{3, 1 << 8}},
		{"f16 1.0", m.ConstFloat(f16, 1), []uint32{0x3c00}},
		{"f16 -2.0", m.ConstFloat(f16, -2), []uint32{0xc000}},
		{"f32 1.0", m.F32(1), []uint32{0x3f800000}},
		{"f64 1.0", m.ConstFloat(f64, 1), []uint32{0, 0x3ff00000}},
		{"f32 bits", m.ConstFloatBits(m.TypeF32(), 0x7fc00001), []uint32{0x7fc00001}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, constWords(m, c.c), c.name)
	}
	require.NoError(t, m.Err())
	v, ok := m.ConstValue(m.ConstInt(i8, -1))
	assert.True(t, ok)
	assert.Equal(t, uint64(0xff), v)
}

func TestConstantRangeErrors(t *testing.T) {
	for name, build := range map[string]func(m *Module){
		"u8 256":           func(m *Module) { m.ConstUint(m.TypeInt(8, false), 256) },
		"i8 -129":          func(m *Module) { m.ConstInt(m.TypeInt(8, true), -129) },
		"float const, int": func(m *Module) { m.ConstFloat(m.TypeU32(), 1) },
		"int const, float": func(m *Module) { m.ConstInt(m.TypeF32(), 1) },
	} {
		m := NewModule(Version1_3)
		build(m)
		assert.Error(t, m.Err(), name)
	}
}

func TestFloat16Bits(t *testing.T) {
	cases := []struct {
		in   float64
		want uint16
	}{
		{0, 0x0000},
		{math.Copysign(0, -1), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
		{65504, 0x7bff},                 // largest finite half
		{65519.99, 0x7bff},              // still rounds down to it
		{65520, 0x7c00},                 // the halfway point rounds (to even) to infinity
		{1e10, 0x7c00},                  // overflow
		{math.Inf(-1), 0xfc00},          // infinity
		{math.Ldexp(1, -14), 0x0400},    // smallest normal
		{math.Ldexp(1, -24), 0x0001},    // smallest subnormal
		{math.Ldexp(1, -25), 0x0000},    // half of it: tie to even (0)
		{math.Ldexp(3, -26), 0x0001},    // 0.75 of it rounds up
		{math.Ldexp(3, -25), 0x0002},    // 1.5 ulp: tie to even (2)
		{2049, 0x6800},                  // tie between 2048 and 2050 goes to even (2048)
		{2051, 0x6802},                  // tie between 2050 and 2052 goes to even (2052)
		{1e-30, 0x0000},                 // underflow
		{math.Ldexp(1023, -24), 0x03ff}, // largest subnormal
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Float16Bits(c.in), "Float16Bits(%g)", c.in)
	}
	nan := Float16Bits(math.NaN())
	assert.Equal(t, uint16(0x7c00), nan&0x7c00, "NaN keeps an all-ones exponent")
	assert.NotZero(t, nan&0x0200, "NaN is quiet")
}

func TestStd430Layout(t *testing.T) {
	m := NewModule(Version1_3)
	f32, u32, u64 := m.TypeF32(), m.TypeU32(), m.TypeInt(64, false)
	vec3, vec2 := m.TypeVector(f32, 3), m.TypeVector(f32, 2)
	assert.Equal(t, uint32(16), m.ElementStride(vec3), "vec3 arrays stride 16")
	assert.Equal(t, uint32(12), m.SizeOf(vec3))
	assert.Equal(t, uint32(8), m.AlignOf(vec2))
	assert.Equal(t, uint32(2), m.ElementStride(m.TypeFloat(16)))
	assert.Equal(t, []uint32{0, 8, 16, 32, 44}, m.std430Offsets([]ID{u32, u64, vec3, vec3, u32}))
	arr := m.TypeArrayStride(f32, 4, 4)
	assert.Equal(t, []uint32{0, 4, 32}, m.std430Offsets([]ID{u32, arr, m.TypeVector(f32, 4)}))
	// The u32 after a vec3 packs into the vec3's last 4 bytes (offset 28).
	assert.Equal(t, uint32(32), m.SizeOf(m.TypeStruct(u32, vec3, u32)))
	assert.Equal(t, uint32(32), m.SizeOf(m.TypeStruct(vec3, u32, u32)), "struct size rounds to its 16-byte alignment")
	require.NoError(t, m.Err())
}

func TestBlockLayoutRejectsWhatItCannotExpress(t *testing.T) {
	for name, build := range map[string]func(m *Module){
		"array without stride": func(m *Module) { m.PushConstants("p", Member{Type: m.TypeArray(m.TypeU32(), 2)}) },
		"nested struct":        func(m *Module) { m.PushConstants("p", Member{Type: m.TypeStruct(m.TypeU32())}) },
		"bool member":          func(m *Module) { m.PushConstants("p", Member{Type: m.TypeBool()}) },
		"runtime array first": func(m *Module) {
			m.StorageBlock("b", 0, 0, 0, Member{Type: m.TypeRuntimeArray(m.TypeU32(), 4)}, Member{Type: m.TypeU32()})
		},
	} {
		m := NewModule(Version1_3)
		build(m)
		assert.Error(t, m.Err(), name)
	}
}

// TestStickyErrors checks that misuse is recorded once, later calls carry
// on, and Assemble reports the first error.
func TestStickyErrors(t *testing.T) {
	cases := map[string]func(m *Module, k *Function){
		"bad vector size":    func(m *Module, k *Function) { m.TypeVector(m.TypeF32(), 5) },
		"vector of vector":   func(m *Module, k *Function) { m.TypeVector(m.TypeVector(m.TypeF32(), 2), 2) },
		"bad int width":      func(m *Module, k *Function) { m.TypeInt(24, false) },
		"after terminator":   func(m *Module, k *Function) { k.Return(); k.IAdd(m.U32(1), m.U32(2)) },
		"break outside loop": func(m *Module, k *Function) { k.Break() },
		"continue outside":   func(m *Module, k *Function) { k.Continue() },
		"non-constant member": func(m *Module, k *Function) {
			pc := m.PushConstants("p", Member{Type: m.TypeU32()})
			k.AccessChain(pc.Var, k.IAdd(m.U32(0), m.U32(0)))
		},
		"unknown value":       func(m *Module, k *Function) { k.IAdd(12345, 1) },
		"missing operand":     func(m *Module, k *Function) { k.Op(OpIAdd, m.TypeU32(), uint32(m.U32(1))) },
		"unknown opcode":      func(m *Module, k *Function) { k.Op(Op(0xfff0), 0) },
		"duplicate SpecId":    func(m *Module, k *Function) { m.SpecConstBool(1, true); m.SpecConstBool(1, false) },
		"function var global": func(m *Module, k *Function) { m.Variable(StorageClassFunction, m.TypeU32(), "x") },
		"unsupported builtin": func(m *Module, k *Function) { m.BuiltIn(BuiltInPosition) },
		"loop cond with flow": func(m *Module, k *Function) {
			k.While(func() ID { k.If(m.ConstBool(true), func() {}, nil); return m.ConstBool(true) }, func() {})
		},
	}
	for name, misuse := range cases {
		t.Run(name, func(t *testing.T) {
			m := NewModule(Version1_3)
			k := m.Kernel("main", 1, 1, 1)
			misuse(m, k)
			first := m.Err()
			require.Error(t, first)
			m.TypeVector(m.TypeF32(), 7) // a second error must not replace the first
			_, err := m.Assemble()
			assert.Equal(t, first, err)
			t.Log(err)
		})
	}
}

func TestNonVoidFunctionNeedsTerminator(t *testing.T) {
	m := NewModule(Version1_3)
	m.Kernel("main", 1, 1, 1)
	m.Function("g", m.TypeU32())
	_, err := m.Assemble()
	assert.ErrorContains(t, err, "no terminator")
}

func TestAssembleHeader(t *testing.T) {
	m := NewModule(Version1_5)
	m.Kernel("main", 1, 1, 1)
	words, err := m.Assemble()
	require.NoError(t, err)
	assert.Equal(t, uint32(MagicNumber), words[0])
	assert.Equal(t, uint32(Version1_5), words[1])
	assert.Equal(t, uint32(Generator), words[2])
	assert.Equal(t, m.Bound(), words[3])
	assert.Zero(t, words[4], "schema")
	assert.Equal(t, uint32(2)<<16|uint32(OpCapability), words[5], "capabilities come first")

	again, err := m.Assemble()
	require.NoError(t, err)
	assert.Equal(t, words, again, "Assemble is repeatable")

	back, err := Words(Bytes(words))
	require.NoError(t, err)
	assert.Equal(t, words, back)
	_, err = Words([]byte{1, 2, 3})
	assert.Error(t, err)
	_, err = Words(make([]byte, 8))
	assert.Error(t, err)
}

func TestAssembleNeedsEntryPoint(t *testing.T) {
	_, err := NewModule(Version1_3).Assemble()
	assert.ErrorContains(t, err, "no entry point")
}

func TestGeneratedTables(t *testing.T) {
	assert.Equal(t, "OpFAdd", OpFAdd.String())
	assert.Equal(t, "Op(65000)", Op(65000).String())
	assert.Equal(t, OpSDot, OpSDotKHR, "aliases share a value")
	assert.Equal(t, "OpSDot", OpSDotKHR.String(), "the core name wins")
	assert.True(t, OpFAdd.HasResult())
	assert.True(t, OpFAdd.HasResultType())
	assert.False(t, OpStore.HasResult())
	assert.True(t, OpLabel.HasResult())
	assert.False(t, OpLabel.HasResultType())
	assert.Equal(t, "Arithmetic", OpFAdd.Info().Class)
	assert.Equal(t, 4, OpFAdd.minOperandWords())
	assert.Equal(t, 3, OpLoopMerge.minOperandWords())
	assert.Equal(t, "LocalSize", ExecutionModeLocalSize.String())
	assert.Equal(t, "GlobalInvocationId", BuiltInGlobalInvocationId.String())
	assert.Equal(t, "AcquireRelease|WorkgroupMemory", (MemorySemanticsAcquireRelease | MemorySemanticsWorkgroupMemory).String())
	assert.Equal(t, "None", SelectionControlNone.String())
	assert.Equal(t, "Unroll|0x40000000", (LoopControlUnroll | 0x40000000).String())
	assert.Equal(t, "StorageClass(9999)", StorageClass(9999).String())
	assert.Equal(t, "FMax", GLSLFMax.String())
	assert.Equal(t, GLSLInst(40), GLSLFMax)
	assert.Equal(t, "IdRef", OperandKindIdRef.String())
	assert.Equal(t, Version(0x00010600), GrammarVersion)
	assert.Equal(t, "SPIR-V 1.3", Version1_3.String())
}

func TestTypeQueries(t *testing.T) {
	m := NewModule(Version1_3)
	i16v := m.TypeVector(m.TypeInt(16, true), 2)
	assert.True(t, m.IsInt(i16v))
	assert.True(t, m.IsSigned(i16v))
	assert.False(t, m.IsFloat(i16v))
	assert.Equal(t, 16, m.Width(i16v))
	assert.Equal(t, 2, m.VectorSize(i16v))
	assert.Equal(t, "vec2<i16>", m.TypeName(i16v))
	ptr := m.TypePointer(StorageClassStorageBuffer, m.TypeRuntimeArray(m.TypeF32(), 4))
	assert.Equal(t, "ptr<StorageBuffer, []f32>", m.TypeName(ptr))
	assert.Equal(t, StorageClassStorageBuffer, m.StorageClassOf(ptr))
	require.NoError(t, m.Err())
}
