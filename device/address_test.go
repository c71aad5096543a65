package device_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

// TestBufferDeviceAddress: lavapipe reports bufferDeviceAddress, Open enables it,
// and a kernel that reaches a buffer only through its device address (read from a
// table binding, the codegen's path for tensors larger than one binding) updates
// exactly the words it should, at an offset into the buffer.
func TestBufferDeviceAddress(t *testing.T) {
	d := devicetest.Open(t)
	x := newBuffer(t, d, 4096)
	if c := d.Caps(); !c.BufferDeviceAddress {
		require.NotEqual(t, "llvmpipe", c.Driver.Name, "lavapipe reports bufferDeviceAddress")
		_, err := x.Address()
		require.ErrorIs(t, err, device.ErrNoDeviceAddress)
		return
	}
	other := newBuffer(t, d, 4096)
	ax, err := x.Address()
	require.NoError(t, err)
	ao, err := other.Address()
	require.NoError(t, err)
	require.NotZero(t, ax)
	require.NotEqual(t, ax, ao, "two live buffers have distinct addresses")

	const off, n = 256, 100 // bytes into x, words updated
	words := make([]uint32, 1024)
	for i := range words {
		words[i] = uint32(i) * 3
	}
	require.NoError(t, x.Write(0, devicetest.U32Bytes(words...)))
	table := newBuffer(t, d, 16)
	require.NoError(t, table.Write(0, binary.LittleEndian.AppendUint64(nil, ax+off)))

	k := newKernel(t, d, addrSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 4})
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: table}}, devicetest.U32Bytes(n), 2, 1, 1))
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))

	got := make([]byte, 4096)
	require.NoError(t, x.Read(0, got))
	for i, w := range devicetest.BytesU32(got) {
		want := uint32(i) * 3
		if i >= off/4 && i < off/4+n {
			want++
		}
		require.Equal(t, want, w, "word %d", i)
	}

	require.NoError(t, x.Close())
	_, err = x.Address()
	require.ErrorIs(t, err, device.ErrClosed)
}
