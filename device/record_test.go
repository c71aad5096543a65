package device_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

// TestRecord: inc, copy, inc recorded by Record run in order (the barriers make
// the copy see the first inc and the second inc see the copy), with one pair of
// timestamps per dispatch when timed; a bad command closes the buffer and names
// its index.
func TestRecord(t *testing.T) {
	d := devicetest.Open(t)
	const n = 64
	k := newKernel(t, d, incSPV, incSpec)
	a, b := newBuffer(t, d, 4*n), newBuffer(t, d, 4*n)
	require.NoError(t, a.Write(0, make([]byte, 4*n)))
	require.NoError(t, b.Write(0, make([]byte, 4*n)))
	whole := func(buf *device.Buffer) device.BufferRange { return device.BufferRange{Buffer: buf, Size: 4 * n} }
	inc := func(buf *device.Buffer) device.Command {
		return device.Command{Kernel: k, Bindings: []device.BufferRange{{Buffer: buf}}, Push: devicetest.U32Bytes(n), Groups: [3]uint32{1, 1, 1}}
	}
	timed := d.Caps().TimestampsSupported
	cb, err := d.Record([]device.Command{inc(a), {Src: whole(a), Dst: whole(b)}, inc(b)}, timed)
	require.NoError(t, err)
	defer cb.Close()
	require.NoError(t, d.Submit(context.Background(), cb))
	out := make([]byte, 4*n)
	require.NoError(t, b.Read(0, out))
	for i, v := range devicetest.BytesU32(out) {
		require.EqualValues(t, 2, v, "word %d of the copy, incremented", i)
	}
	if timed {
		times, err := cb.DispatchTimes()
		require.NoError(t, err)
		assert.Len(t, times, 2)
	}

	_, err = d.Record([]device.Command{inc(a), {Src: whole(a), Dst: device.BufferRange{Buffer: b, Offset: 4 * n, Size: 4 * n}}}, timed)
	var ce *device.CommandError
	require.True(t, errors.As(err, &ce), "error %v", err)
	assert.Equal(t, 1, ce.Index)
}
