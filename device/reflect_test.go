package device_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

// The reader sees what the committed modules declare (their GLSL is beside them).
func TestReflectSPIRV(t *testing.T) {
	in, err := device.ReflectSPIRV(texelSPV, "main")
	require.NoError(t, err)
	assert.Equal(t, map[uint32]device.BindingKind{0: device.BindingStorageBuffer,
		1: device.BindingTexelBuffer, 2: device.BindingTexelBuffer}, in.Bindings)
	assert.Equal(t, [3]uint32{64, 1, 1}, in.LocalSize)
	assert.Equal(t, 4, in.PushConstantSize) // uint n
	in, err = device.ReflectSPIRV(addSPV, "main")
	require.NoError(t, err)
	assert.Len(t, in.Bindings, 3)
	assert.Equal(t, 8, in.PushConstantSize) // uint n, float bias
}

// A spec the module disagrees with is refused before the driver sees it (lavapipe
// reads or writes outside what was bound, or dies with SIGBUS), naming the binding
// and both sides; malformed SPIR-V is refused the same way.
func TestNewKernelRefusesDisagreeingSpec(t *testing.T) {
	d := devicetest.Open(t)
	truncated := append([]byte(nil), incSPV[:len(incSPV)-8]...)
	badMagic := append([]byte(nil), incSPV...)
	binary.LittleEndian.PutUint32(badMagic, 0x03022307)                                           // big-endian magic
	cutInside := append(append([]byte(nil), incSPV[:20]...), devicetest.U32Bytes(5<<16|15, 5)...) // OpEntryPoint, 2 of its 5 words
	rgba := []device.TexelFormat{device.TexelRGBA32U, device.TexelRGBA16U}
	for _, c := range []struct {
		name  string
		spirv []byte
		spec  device.KernelSpec
		want  string
	}{
		{"module declares one binding more", texelSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 4, Texels: rgba[:1]},
			"binding 2: the module declares a uniform texel buffer, the spec has nothing there (1 storage, 1 uniform texel buffers)"},
		{"texel buffer bound as storage", texelSPV, device.KernelSpec{Bindings: 3, PushConstantSize: 4},
			"binding 1: the spec has a storage buffer, the module declares a uniform texel buffer"},
		{"storage buffer bound as texel", addSPV, device.KernelSpec{Bindings: 2, PushConstantSize: 8, Texels: rgba[:1]},
			"binding 2: the spec has a uniform texel buffer, the module declares a storage buffer"},
		{"push block larger than the spec", addSPV, device.KernelSpec{Bindings: 3, PushConstantSize: 4},
			"push constants: the module's block is 8 bytes, the spec passes 4"},
		{"wrong entry point", incSPV, device.KernelSpec{EntryPoint: "inc", Bindings: 1, PushConstantSize: 4},
			`no GLCompute entry point "inc"`},
		{"truncated", truncated, incSpec, "malformed SPIR-V: the module does not end with a whole function"},
		{"cut inside an instruction", cutInside, incSpec, "malformed SPIR-V: instruction at word 5 has length 5"},
		{"not whole words", incSPV[:len(incSPV)-2], incSpec, "not SPIR-V: 850 bytes"},
		{"bad magic", badMagic, incSpec, "not SPIR-V: magic number 0x03022307"},
		{"empty", nil, incSpec, "not SPIR-V: 0 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := d.NewKernel(c.spirv, c.spec)
			require.ErrorIs(t, err, device.ErrInvalidArgument)
			assert.Nil(t, k)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := device.ReflectSPIRV(truncated, "main")
	require.ErrorIs(t, err, device.ErrInvalidArgument)
}

// A spec with more than the module declares is a superset layout, which Vulkan allows:
// the kernel is made and runs correctly, never reading the extra binding or push bytes.
func TestNewKernelAcceptsSupersetSpec(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, incSPV, device.KernelSpec{Bindings: 2, PushConstantSize: 8})
	x := newBuffer(t, d, 16)
	spare := newBuffer(t, d, 16)
	require.NoError(t, x.Write(0, devicetest.U32Bytes(1, 2, 3, 4)))
	require.NoError(t, spare.Write(0, devicetest.U32Bytes(9, 9, 9, 9)))
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: x}, {Buffer: spare}}, devicetest.U32Bytes(3, 0), 1, 1, 1))
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
	out := make([]byte, 16)
	require.NoError(t, x.Read(0, out))
	assert.Equal(t, []uint32{2, 3, 4, 4}, devicetest.BytesU32(out))
	require.NoError(t, spare.Read(0, out))
	assert.Equal(t, []uint32{9, 9, 9, 9}, devicetest.BytesU32(out))
}
