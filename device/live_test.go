package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device/devicetest"
)

func TestLiveObjectsCountsUnfreed(t *testing.T) {
	d := devicetest.Open(t)
	require.Equal(t, 0, d.LiveObjects())
	b, err := d.NewBuffer(64)
	require.NoError(t, err)
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	require.Equal(t, 2, d.LiveObjects())
	require.NoError(t, b.Close())
	require.NoError(t, cb.Close())
	require.Equal(t, 0, d.LiveObjects())
}
