package codegen

import (
	"encoding/binary"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The root package's test kernel (testdata/kernels/axpy_diff.comp): x, y → (a·x+y,
// x−y) over four storage buffers of 32-bit floats, push constants {n, a}.
const axpySPV = "../../testdata/kernels/axpy_diff.spv"

func axpyWords(t *testing.T) []uint32 {
	t.Helper()
	bin, err := os.ReadFile(axpySPV)
	require.NoError(t, err)
	w, err := spirv.Words(bin)
	require.NoError(t, err)
	return w
}

// userTarget registers a kernel target over words once per name.
var userTargets sync.Map

func userTarget(t *testing.T, name string, words []uint32) {
	t.Helper()
	if _, done := userTargets.LoadOrStore(name, true); done {
		return
	}
	require.NoError(t, hlo.RegisterCustomCall(hlo.CustomCallTarget{Name: name,
		Kernel: &hlo.SPIRVKernel{Words: words, EntryPoint: "main",
			Groups: func(call *hlo.Instruction) ([3]uint32, error) {
				return [3]uint32{uint32(call.Operands[0].Shape.NumElements()+63) / 64, 1, 1}, nil
			},
			Push: func(call *hlo.Instruction) ([]byte, error) {
				return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil,
					uint32(call.Operands[0].Shape.NumElements())), 0x40200000), nil // a = 2.5
			}},
		Reference: func(*hlo.Instruction, []*hlo.Literal) (*hlo.Literal, error) { return nil, nil }}))
}

// userCall is a computation whose root calls target on n-element operands of dt.
func userCall(t *testing.T, target string, dt hlo.DType, operands int) *hlo.Computation {
	b := hlo.NewBuilder("k")
	s := hlo.MakeShape(dt, 100)
	var xs []*hlo.Instruction
	for range operands {
		xs = append(xs, b.Parameter(s, "x"))
	}
	c, err := b.BuildComputation(b.CustomCall(target, xs, hlo.MakeTuple(s, s), nil))
	require.NoError(t, err)
	return hlo.Alone(c.Root)
}

// A call is one dispatch of the user's module: operands then results bound in
// order, the Groups and Push of the call, the module's local size.
func TestLowerUserKernel(t *testing.T) {
	words := axpyWords(t)
	userTarget(t, "codegen.axpy", words)
	p, err := Lower(userCall(t, "codegen.axpy", hlo.F32, 2), LavapipeTarget())
	require.NoError(t, err)
	require.Len(t, p.Dispatches, 1)
	d := p.Dispatches[0]
	assert.Equal(t, []Arg{{ArgInput, 0}, {ArgInput, 1}, {ArgOutput, 0}, {ArgOutput, 1}}, d.Args)
	assert.Equal(t, [3]uint32{2, 1, 1}, d.Groups)
	assert.Equal(t, []byte{100, 0, 0, 0, 0, 0, 0x20, 0x40}, d.Push)
	assert.Equal(t, spirv.Bytes(words), d.Kernel.SPIRV)
	assert.Equal(t, [3]uint32{64, 1, 1}, d.Kernel.LocalSize)
	assert.Equal(t, 4, d.Kernel.Bindings)
	assert.Equal(t, 8, d.Kernel.PushConstantSize)

	var layout []ArgBinding
	for i := range 4 {
		layout = append(layout, ArgBinding{Path: PathBinding, Binding: i, Pieces: 1})
	}
	assert.Equal(t, layout, d.Kernel.Layout, "every argument bound whole, in order (the runtime binds by Layout)")
	assert.Equal(t, -1, d.Kernel.AddressTable)

	f, err := Facts(userCall(t, "codegen.axpy", hlo.F32, 2), LavapipeTarget())
	require.NoError(t, err)
	assert.Equal(t, d.Args, f.Dispatches[0].Args)
}

// A user's kernel cannot reach a tensor larger than one binding: refused, naming
// the argument and the limit.
func TestUserKernelRefusesBigArgument(t *testing.T) {
	userTarget(t, "codegen.axpy", axpyWords(t))
	small := LavapipeTarget()
	small.MaxStorageBufferRange = 256 // 100 f32 = 400 bytes
	_, err := Lower(userCall(t, "codegen.axpy", hlo.F32, 2), small)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kernel target "codegen.axpy"`)
	assert.Contains(t, err.Error(), "argument 0 (f32[100]) is 400 bytes")
}

// patchDecoration rewrites the value of the first OpDecorate … dec value.
func patchDecoration(t *testing.T, words []uint32, dec spirv.Decoration, from, to uint32) []uint32 {
	w := append([]uint32{}, words...)
	for i := 5; i < len(w); i += int(w[i] >> 16) {
		if spirv.Op(w[i]&0xFFFF) == spirv.OpDecorate && w[i]>>16 == 4 && spirv.Decoration(w[i+2]) == dec && w[i+3] == from {
			w[i+3] = to
			return w
		}
	}
	t.Fatalf("no decoration %v %d", dec, from)
	return nil
}

// Modules and calls that do not fit are errors naming the target and the call.
func TestUserKernelMismatches(t *testing.T) {
	words := axpyWords(t)
	userTarget(t, "codegen.axpy", words)
	userTarget(t, "codegen.gap", patchDecoration(t, words, spirv.DecorationBinding, 3, 5))
	userTarget(t, "codegen.set1", patchDecoration(t, words, spirv.DecorationDescriptorSet, 0, 1))
	for _, c := range []struct {
		target   string
		dt       hlo.DType
		operands int
		want     string
	}{
		{"codegen.axpy", hlo.F32, 3, "the kernel binds 4 storage buffers; the call has 3 operands and 2 results"},
		{"codegen.axpy", hlo.F64, 2, "binding 0 is an array of 32-bit floats, but operand 0 is f64[100]"},
		{"codegen.gap", hlo.F32, 2, "the bindings are not 0..3: binding 3 is missing"},
		{"codegen.set1", hlo.F32, 2, "is in descriptor set 1; kernels bind set 0"},
	} {
		_, err := Lower(userCall(t, c.target, c.dt, c.operands), LavapipeTarget())
		require.Error(t, err, c.target)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), `(kernel target "`+c.target+`")`)
		assert.Contains(t, err.Error(), "custom-call custom-call")
	}
}
