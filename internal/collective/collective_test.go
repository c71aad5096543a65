package collective

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// The device groups of each mode on 2 replicas × 3 partitions (devices
// r×3+p), worked out from XLA's definitions.
func TestGroupsByMode(t *testing.T) {
	topo := Topology{Replicas: 2, Partitions: 3}
	for _, c := range []struct {
		name    string
		op      hlo.Opcode
		attrs   hlo.Attributes
		mode    Mode
		devices [][]int
	}{
		{"cross-replica/all", hlo.OpAllReduce, hlo.Attributes{}, CrossReplica, [][]int{{0, 3}, {1, 4}, {2, 5}}},
		{"cross-replica/each", hlo.OpAllReduce, hlo.Attributes{ReplicaGroups: [][]int64{{1}, {0}}}, CrossReplica,
			[][]int{{3}, {0}, {4}, {1}, {5}, {2}}},
		{"cross-partition", hlo.OpAllToAll, hlo.Attributes{HasChannelID: true, ReplicaGroups: [][]int64{{0, 2}, {1}}}, 0, nil},
		{"cross-partition/all", hlo.OpAllToAll, hlo.Attributes{HasChannelID: true}, CrossPartition, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{"cross-replica-and-partition", hlo.OpAllGather, hlo.Attributes{HasChannelID: true, ReplicaGroups: [][]int64{{1}, {0}}},
			CrossReplicaAndPartition, [][]int{{3, 4, 5}, {0, 1, 2}}},
		{"flattened-id", hlo.OpReduceScatter, hlo.Attributes{HasChannelID: true, UseGlobalDeviceIDs: true,
			ReplicaGroups: [][]int64{{5, 0}, {1, 4}, {2, 3}}}, FlattenedID, [][]int{{5, 0}, {1, 4}, {2, 3}}},
	} {
		in := &hlo.Instruction{Name: "c", Op: c.op, Attrs: c.attrs}
		got, err := Groups(in, topo)
		if c.devices == nil { // groups of unequal size
			assert.ErrorIs(t, err, ErrInvalidGroups, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.devices, got, c.name)
		mode, _ := ModeOf(in)
		assert.Equal(t, c.mode, mode, c.name)
	}
}

func TestPermuteGroups(t *testing.T) {
	topo := Topology{Replicas: 2, Partitions: 2}
	in := &hlo.Instruction{Name: "p", Op: hlo.OpCollectivePermute, Attrs: hlo.Attributes{SourceTargetPairs: [][]int64{{0, 1}}}}
	g, mode, err := PermuteGroups(in, topo)
	require.NoError(t, err)
	assert.Equal(t, CrossReplica, mode)
	assert.Equal(t, [][]int{{0, 2}, {1, 3}}, g)
	in.Attrs.HasChannelID = true
	g, mode, err = PermuteGroups(in, topo)
	require.NoError(t, err)
	assert.Equal(t, CrossPartition, mode)
	assert.Equal(t, [][]int{{0, 1}, {2, 3}}, g)
}

func exchangeIn(ctx context.Context, r *Rendezvous, d int, site string) error {
	_, err := r.Member(d).Exchange(ctx, site, site, []int{0, 1, 2}, []*hlo.Literal{hlo.ScalarLiteral(float32(d))})
	return err
}

// Two of three devices wait; the third finishing without arriving fails them.
func TestRendezvousDetectsAFinishedMember(t *testing.T) {
	r := NewRendezvous(Topology{Replicas: 3, Partitions: 1})
	errs := make(chan error, 2)
	for d := range 2 {
		go func() { errs <- exchangeIn(context.Background(), r, d, "x") }()
	}
	time.Sleep(10 * time.Millisecond)
	r.Member(2).Finish()
	for range 2 {
		err := <-errs
		assert.ErrorIs(t, err, ErrMismatch)
		assert.Contains(t, err.Error(), "device 2 (replica 2, partition 0) finished without reaching it")
	}
}

func TestRendezvousMeetsAndCancels(t *testing.T) {
	r := NewRendezvous(Topology{Replicas: 3, Partitions: 1})
	got := make(chan [][]*hlo.Literal, 3)
	for d := range 3 {
		go func() {
			v, err := r.Member(d).Exchange(context.Background(), "s", "s", []int{2, 0, 1}, []*hlo.Literal{hlo.ScalarLiteral(float32(d))})
			assert.NoError(t, err)
			got <- v
		}()
	}
	for range 3 {
		v := <-got
		require.Len(t, v, 3)
		assert.Equal(t, float64(2), v[0][0].Float64(0)) // by position in the group
	}

	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error)
	go func() { errs <- exchangeIn(ctx, r, 0, "t") }()
	cancel()
	assert.True(t, errors.Is(<-errs, context.Canceled))
}
