package collective

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vkxla/vkxla/hlo"
)

// World is a fixed set of processes that exchange bytes together, as MPI's
// MPI_COMM_WORLD: every process calls AllGather the same number of times, in the
// same order, and each call returns every process's bytes, by rank.
type World interface {
	Rank() int
	Size() int
	AllGather(ctx context.Context, b []byte) ([][]byte, error)
}

// WorldMember is one process's device on a run across a World: device id = rank,
// one device per process. Each execution of a collective is one AllGather round of
// every process, carrying a header (what the process is at, its group, its
// operands' sizes) and its operands' bytes; Device.Eval computes the result from
// the members' values as on the in-process Rendezvous, so both give the same bits.
//
// Every process takes part in every round — also when its group is itself alone,
// since only a round tells it whether the others are at the same collective — so
// the processes must execute the same collectives in the same order (an SPMD
// program's devices do, unless a device-dependent loop runs one more often). A
// round whose headers disagree (processes at different collectives or executions,
// groups that do not match, operands of different sizes, a process finished or
// failed) fails every process with ErrMismatch, saying where each one is: every
// process judges the same headers, so all of them stop at the same round, and none
// waits for a round the others will not join. A run ends with Finish, one last
// round.
type WorldMember struct {
	w      World
	topo   Topology
	counts map[string]int
	over   error // set when a round ended the run: every later call fails with it
	ended  bool  // Finish's round (or a failed one) has been held
}

// NewWorldMember is this process's device on a run of topo's devices, one per
// process of w: the process of rank d is device d.
func NewWorldMember(w World, topo Topology) (*WorldMember, error) {
	if err := topo.Check(); err != nil {
		return nil, err
	}
	if w.Size() != topo.Devices() {
		return nil, fmt.Errorf("%w: %d processes for %d replicas × %d partitions: want one process per device",
			ErrInvalidGroups, w.Size(), topo.Replicas, topo.Partitions)
	}
	return &WorldMember{w: w, topo: topo, counts: map[string]int{}}, nil
}

// Device is this process's flat device id.
func (m *WorldMember) Device() int { return m.w.Rank() }

// The states a process reports at a round.
const (
	atCollective byte = iota + 1
	finishedOK
	finishedFailed
)

// header is what one process says at a round.
type header struct {
	state byte
	label string // the collective, "all-reduce %y"
	count int    // executions of it before this one
	group []int
	sizes []int // bytes of each operand
}

// Exchange is one round: this process's values (site is its label's key: a
// string every process's copy of the module shares) for every group member's.
func (m *WorldMember) Exchange(ctx context.Context, site any, label string, group []int, v []*hlo.Literal) ([][]*hlo.Literal, error) {
	if m.over != nil {
		return nil, m.over
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err) // Finish tells the others
	}
	key := fmt.Sprint(site)
	count := m.counts[key]
	m.counts[key]++
	h := header{state: atCollective, label: label, count: count, group: group}
	var payload []byte
	for _, lit := range v {
		h.sizes = append(h.sizes, len(lit.Bytes()))
		payload = append(payload, lit.Bytes()...)
	}
	all, err := m.round(ctx, h, payload)
	if err != nil {
		return nil, err
	}
	vals := make([][]*hlo.Literal, len(group))
	for pos, d := range group {
		if d == m.w.Rank() {
			vals[pos] = v
			continue
		}
		if vals[pos], err = decodeValues(all[d], v); err != nil {
			return nil, fmt.Errorf("%s: %s's values: %w", label, m.topo.Name(d), err)
		}
	}
	return vals, nil
}

// Finish is the run's last round: it says the device is done (runErr is how it
// ended) and returns an error when the run as a whole did not end well — another
// device failed, or was still at a collective — so that every process's run fails
// together. Every process must call it once per run.
func (m *WorldMember) Finish(ctx context.Context, runErr error) error {
	if m.ended {
		return m.over
	}
	st := finishedOK
	if runErr != nil {
		st = finishedFailed
	}
	_, err := m.round(ctx, header{state: st}, nil)
	m.ended = true
	return err
}

// round exchanges h and payload with every process and judges the headers: nil
// (with every process's message) when all are at this collective, in matching
// groups with operands of matching sizes, or all finished well.
func (m *WorldMember) round(ctx context.Context, h header, payload []byte) ([][]byte, error) {
	// Once a process has begun a round it holds it: a cancelled context has been
	// seen before (Exchange), and Finish tells the others.
	msgs, err := m.w.AllGather(context.WithoutCancel(ctx), append(h.encode(), payload...))
	if err != nil {
		m.over, m.ended = fmt.Errorf("exchanging with the other processes: %w", err), true
		return nil, m.over
	}
	heads := make([]header, len(msgs))
	for d, msg := range msgs {
		if heads[d], msgs[d], err = decodeHeader(msg); err != nil {
			m.over, m.ended = fmt.Errorf("%s's message: %w", m.topo.Name(d), err), true
			return nil, m.over
		}
	}
	if err := m.judge(heads); err != nil {
		m.over, m.ended = err, true
		return nil, err
	}
	return msgs, nil
}

// judge: every process decides from the same headers, so all reach the same
// verdict.
func (m *WorldMember) judge(heads []header) error {
	first := heads[0]
	same := true
	for _, h := range heads {
		same = same && h.state == first.state && h.label == first.label && h.count == first.count
	}
	switch {
	case same && first.state == finishedOK:
		return nil
	case same && first.state == atCollective:
		if err := m.checkGroups(heads); err != nil {
			return err
		}
		return nil
	}
	var where []string
	for d, h := range heads {
		where = append(where, m.topo.Name(d)+" "+h.where())
	}
	return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(where, "; "))
}

// checkGroups: each device's group holds it, every member names the same group,
// and the members' operands have the same sizes.
func (m *WorldMember) checkGroups(heads []header) error {
	for d, h := range heads {
		if !slices.Contains(h.group, d) {
			return fmt.Errorf("%w: %s: %s meets group %v, which does not hold it", ErrMismatch, h.what(), m.topo.Name(d), h.group)
		}
		for _, e := range h.group {
			if e < 0 || e >= len(heads) {
				return fmt.Errorf("%w: %s: %s meets group %v, beyond the %d devices", ErrMismatch, h.what(), m.topo.Name(d), h.group, len(heads))
			}
			if !slices.Equal(heads[e].group, h.group) {
				return fmt.Errorf("%w: %s: %s meets group %v, %s group %v", ErrMismatch, h.what(), m.topo.Name(d), h.group, m.topo.Name(e), heads[e].group)
			}
			if !slices.Equal(heads[e].sizes, h.sizes) {
				return fmt.Errorf("%w: %s: %s's operands are %v bytes, %s's %v", ErrMismatch, h.what(), m.topo.Name(d), h.sizes, m.topo.Name(e), heads[e].sizes)
			}
		}
	}
	return nil
}

func (h header) what() string { return fmt.Sprintf("%s (execution %d)", h.label, h.count+1) }

func (h header) where() string {
	switch h.state {
	case atCollective:
		return "waits at " + h.what()
	case finishedOK:
		return "finished"
	}
	return "stopped with an error"
}

// encode: state, count, label, group, sizes; integers as little-endian uint64s.
func (h header) encode() []byte {
	b := []byte{h.state}
	b = binary.LittleEndian.AppendUint64(b, uint64(h.count))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(h.label)))
	b = append(b, h.label...)
	for _, xs := range [][]int{h.group, h.sizes} {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(xs)))
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
	}
	return b
}

var errShort = errors.New("truncated header")

// decodeHeader splits a message into its header and its payload.
func decodeHeader(b []byte) (header, []byte, error) {
	var h header
	if len(b) < 1 {
		return h, nil, errShort
	}
	h.state, b = b[0], b[1:]
	next := func() (int, bool) {
		if len(b) < 8 {
			return 0, false
		}
		x := binary.LittleEndian.Uint64(b)
		b = b[8:]
		return int(x), x <= 1<<48
	}
	c, ok1 := next()
	n, ok2 := next()
	if !ok1 || !ok2 || len(b) < n {
		return h, nil, errShort
	}
	h.count, h.label, b = c, string(b[:n]), b[n:]
	for _, xs := range []*[]int{&h.group, &h.sizes} {
		n, ok := next()
		if !ok || len(b) < 8*n {
			return h, nil, errShort
		}
		for range n {
			x, _ := next()
			*xs = append(*xs, x)
		}
	}
	return h, b, nil
}

// decodeValues reads a member's operands from its payload, shaped as this
// device's own (the members of a collective share its operands' shapes; judge
// checked the sizes).
func decodeValues(payload []byte, like []*hlo.Literal) ([]*hlo.Literal, error) {
	out := make([]*hlo.Literal, len(like))
	for k, l := range like {
		n := len(l.Bytes())
		if len(payload) < n {
			return nil, fmt.Errorf("operand %d: %d bytes, want %d", k, len(payload), n)
		}
		lit, err := hlo.LiteralFromBytes(l.Shape(), payload[:n])
		if err != nil {
			return nil, fmt.Errorf("operand %d: %w", k, err)
		}
		out[k], payload = lit, payload[n:]
	}
	return out, nil
}
