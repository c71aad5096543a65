// Package collective is the multi-device semantics of vkxla's collectives, shared by
// the reference interpreter (cpuref.EvalReplicas) and the runtime's host steps
// (vkxla.WithReplicas): which devices meet at a collective (its group mode and
// replica groups, as XLA defines them), a rendezvous where they meet, and what
// each member's result is. It knows HLO and nothing of Vulkan.
//
// Devices are numbered by their flat id replica×partitions + partition, XLA's
// global device id under its default device assignment.
package collective

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// ErrInvalidGroups is wrapped by the errors about a collective's replica_groups or
// source_target_pairs that name no valid set of devices for the topology.
var ErrInvalidGroups = errors.New("invalid collective groups")

// Topology is the devices a program runs on: Replicas × Partitions of them.
type Topology struct{ Replicas, Partitions int }

// Devices is the number of devices.
func (t Topology) Devices() int { return t.Replicas * t.Partitions }

// Replica and Partition are device d's coordinates.
func (t Topology) Replica(d int) int   { return d / t.Partitions }
func (t Topology) Partition(d int) int { return d % t.Partitions }

// Device is the flat id of (replica, partition).
func (t Topology) Device(replica, partition int) int { return replica*t.Partitions + partition }

// Name names device d in errors.
func (t Topology) Name(d int) string {
	return fmt.Sprintf("device %d (replica %d, partition %d)", d, t.Replica(d), t.Partition(d))
}

// Check rejects a topology without devices.
func (t Topology) Check() error {
	if t.Replicas < 1 || t.Partitions < 1 {
		return fmt.Errorf("%w: %d replicas × %d partitions: want at least one of each", ErrInvalidGroups, t.Replicas, t.Partitions)
	}
	return nil
}

// Mode is XLA's CollectiveOpGroupMode: what the ids of replica_groups (and
// collective-permute's source_target_pairs) name.
type Mode uint8

// The group modes.
const (
	// CrossReplica: ids are replicas; each group meets within every partition.
	CrossReplica Mode = iota
	// CrossPartition: ids are partitions; each group meets within every replica.
	CrossPartition
	// CrossReplicaAndPartition: ids are replicas; a group meets with all the
	// partitions of its replicas.
	CrossReplicaAndPartition
	// FlattenedID: ids are flat device ids.
	FlattenedID
)

func (m Mode) String() string {
	return [...]string{"cross-replica", "cross-partition", "cross-replica-and-partition", "flattened-id"}[m]
}

// uniformGroups: the ops whose result shape depends on the group size need groups
// of one size (XLA's verifier asks the same); all-reduce and
// collective-broadcast take any.
func uniformGroups(op hlo.Opcode) bool {
	switch op {
	case hlo.OpAllGather, hlo.OpAllGatherStart, hlo.OpReduceScatter, hlo.OpAllToAll:
		return true
	}
	return false
}

// takesGlobalIDs: the ops whose use_global_device_ids XLA reads; on the others a
// channel_id alone makes the mode cross-partition.
func takesGlobalIDs(op hlo.Opcode) bool {
	switch op {
	case hlo.OpAllReduce, hlo.OpAllReduceStart, hlo.OpAllGather, hlo.OpAllGatherStart, hlo.OpReduceScatter:
		return true
	}
	return false
}

// ModeOf is the instruction's group mode, as XLA derives it: no channel_id is
// cross-replica; a channel_id is cross-partition on the ops without
// use_global_device_ids, and on the others cross-replica-and-partition, or
// flattened-id when use_global_device_ids=true.
func ModeOf(in *hlo.Instruction) (Mode, error) {
	a := in.Attrs
	switch {
	case !a.HasChannelID && a.UseGlobalDeviceIDs:
		return 0, fmt.Errorf("%w: %v %%%s: use_global_device_ids=true needs a channel_id", ErrInvalidGroups, in.Op, in.Name)
	case !a.HasChannelID:
		return CrossReplica, nil
	case !takesGlobalIDs(in.Op):
		return CrossPartition, nil
	case a.UseGlobalDeviceIDs:
		return FlattenedID, nil
	}
	return CrossReplicaAndPartition, nil
}

// idBound is how many ids the mode's groups choose from.
func idBound(m Mode, t Topology) int {
	switch m {
	case CrossReplica, CrossReplicaAndPartition:
		return t.Replicas
	case CrossPartition:
		return t.Partitions
	}
	return t.Devices()
}

// Groups are the device groups that meet at in: each a list of flat device ids in
// member order (a member's position is its shard in all-gather, reduce-scatter and
// all-to-all). Every device is in exactly one group. Empty replica_groups are one
// group of every id. The ids must be below the mode's bound, appear once, and
// cover every id; the groups of all-gather, reduce-scatter and all-to-all must be
// of one size.
func Groups(in *hlo.Instruction, t Topology) ([][]int, error) {
	mode, err := ModeOf(in)
	if err != nil {
		return nil, err
	}
	ids, err := idGroups(in, in.Attrs.ReplicaGroups, idBound(mode, t), t, uniformGroups(in.Op))
	if err != nil {
		return nil, err
	}
	return deviceGroups(mode, ids, t), nil
}

// PermuteGroups are the groups a collective-permute exchanges within, each
// ordered so that a device's position is the id source_target_pairs name it by:
// the replicas of each partition (cross-replica), or the partitions of each
// replica (with a channel_id).
func PermuteGroups(in *hlo.Instruction, t Topology) ([][]int, Mode, error) {
	mode, err := ModeOf(in)
	if err != nil {
		return nil, 0, err
	}
	n := idBound(mode, t)
	if err := checkPairs(in, n, t); err != nil {
		return nil, 0, err
	}
	return deviceGroups(mode, [][]int{ids(n)}, t), mode, nil
}

func ids(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// idGroups checks the groups' ids against bound and returns them as ints.
func idGroups(in *hlo.Instruction, groups [][]int64, bound int, t Topology, uniform bool) ([][]int, error) {
	if len(groups) == 0 {
		return [][]int{ids(bound)}, nil
	}
	seen := make([]bool, bound)
	out := make([][]int, len(groups))
	for i, g := range groups {
		if len(g) == 0 || uniform && len(g) != len(groups[0]) {
			return nil, groupsError(in, t, "groups are empty or of unequal sizes")
		}
		for _, id := range g {
			if id < 0 || id >= int64(bound) {
				return nil, groupsError(in, t, fmt.Sprintf("id %d is not below %d", id, bound))
			}
			if seen[id] {
				return nil, groupsError(in, t, fmt.Sprintf("id %d appears twice", id))
			}
			seen[id] = true
			out[i] = append(out[i], int(id))
		}
	}
	if missing := slices.Index(seen, false); missing >= 0 {
		return nil, groupsError(in, t, fmt.Sprintf("id %d is in no group", missing))
	}
	return out, nil
}

// groupsError names the instruction, its groups and the topology. On one device
// an id other than 0 is also unsupported: the run has no other device.
func groupsError(in *hlo.Instruction, t Topology, what string) error {
	err := fmt.Errorf("%w: %v %%%s: replica_groups %s on %d replicas × %d partitions: %s",
		ErrInvalidGroups, in.Op, in.Name, groupsText(in.Attrs.ReplicaGroups), t.Replicas, t.Partitions, what)
	if t.Devices() == 1 {
		return fmt.Errorf("%w (%w: run it on several devices)", err, hlo.ErrUnsupported)
	}
	return err
}

func groupsText(groups [][]int64) string {
	if len(groups) == 0 {
		return "{}"
	}
	return fmt.Sprint(groups)
}

// deviceGroups turns groups of mode ids into groups of flat device ids.
func deviceGroups(m Mode, ids [][]int, t Topology) [][]int {
	var out [][]int
	switch m {
	case CrossReplica:
		for p := range t.Partitions {
			for _, g := range ids {
				out = append(out, mapIDs(g, func(r int) []int { return []int{t.Device(r, p)} }))
			}
		}
	case CrossPartition:
		for r := range t.Replicas {
			for _, g := range ids {
				out = append(out, mapIDs(g, func(p int) []int { return []int{t.Device(r, p)} }))
			}
		}
	case CrossReplicaAndPartition:
		for _, g := range ids {
			out = append(out, mapIDs(g, func(r int) []int { return iotaFrom(t.Device(r, 0), t.Partitions) }))
		}
	default:
		out = ids
	}
	return out
}

func mapIDs(g []int, f func(int) []int) []int {
	var out []int
	for _, id := range g {
		out = append(out, f(id)...)
	}
	return out
}

func iotaFrom(start, n int) []int {
	out := ids(n)
	for i := range out {
		out[i] += start
	}
	return out
}

// GroupOf returns the group holding device d and d's position in it.
func GroupOf(groups [][]int, d int) ([]int, int, bool) {
	for _, g := range groups {
		if pos := slices.Index(g, d); pos >= 0 {
			return g, pos, true
		}
	}
	return nil, 0, false
}

// checkPairs: each pair is {source, target} of ids below n; no source and no target
// appears twice.
func checkPairs(in *hlo.Instruction, n int, t Topology) error {
	sources, targets := map[int64]bool{}, map[int64]bool{}
	for _, p := range in.Attrs.SourceTargetPairs {
		what := ""
		switch {
		case len(p) != 2:
			what = fmt.Sprintf("pair %v is not {source,target}", p)
		case p[0] < 0 || p[1] < 0 || p[0] >= int64(n) || p[1] >= int64(n):
			what = fmt.Sprintf("pair %v names an id not below %d", p, n)
		case sources[p[0]]:
			what = fmt.Sprintf("source %d appears twice", p[0])
		case targets[p[1]]:
			what = fmt.Sprintf("target %d appears twice", p[1])
		}
		if what != "" {
			err := fmt.Errorf("%w: %v %%%s: source_target_pairs %v on %d replicas × %d partitions: %s",
				ErrInvalidGroups, in.Op, in.Name, in.Attrs.SourceTargetPairs, t.Replicas, t.Partitions, what)
			if t.Devices() == 1 {
				err = fmt.Errorf("%w (%w: run it on several devices)", err, hlo.ErrUnsupported)
			}
			return err
		}
		sources[p[0]], targets[p[1]] = true, true
	}
	return nil
}
