package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// channel_id and use_global_device_ids are read into the IR and printed back:
// they choose how replica_groups name devices.
func TestCollectiveChannelAttributes(t *testing.T) {
	m, err := ParseModule(`HloModule c
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ar = f32[4] all-reduce(x), channel_id=0, replica_groups={{0}}, use_global_device_ids=true, to_apply=add
  cp = f32[4] collective-permute(ar), channel_id=7, source_target_pairs={{0,0}}
  ROOT a2a = f32[4] all-to-all(cp), replica_groups={{0}}, dimensions={0}
}`)
	require.NoError(t, err)
	ar := m.Entry.Instructions[1]
	assert.True(t, ar.Attrs.HasChannelID)
	assert.Equal(t, int64(0), ar.Attrs.ChannelID)
	assert.True(t, ar.Attrs.UseGlobalDeviceIDs)
	cp := m.Entry.Instructions[2]
	assert.Equal(t, int64(7), cp.Attrs.ChannelID)
	assert.False(t, m.Entry.Root.Attrs.HasChannelID)
	text := Print(m)
	assert.Contains(t, text, "all-reduce(f32[4]{0} %x), channel_id=0, replica_groups={{0}}, use_global_device_ids=true, to_apply=%add")
	assert.Contains(t, text, "collective-permute(f32[4]{0} %ar), channel_id=7, source_target_pairs={{0,0}}")
	assert.NotContains(t, text, "%cp), channel_id")
	again, err := ParseModule(text)
	require.NoError(t, err)
	assert.Equal(t, text, Print(again))

	_, err = ParseModule(`HloModule c
ENTRY e {
  x = f32[4] parameter(0)
  ROOT cp = f32[4] collective-permute(x), channel_id=x, source_target_pairs={}
}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "channel id")
}
