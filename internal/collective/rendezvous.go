package collective

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vkxla/vkxla/hlo"
)

// ErrMismatch is wrapped by the errors of a run whose devices cannot all meet: a
// device finished (or failed) without reaching a collective that others wait at,
// or waits at another one. Every device then stops with an error rather than
// waiting forever.
var ErrMismatch = errors.New("the devices do not meet at a collective")

// Rendezvous is where the devices of one run meet at each collective. A meeting
// is keyed by the collective's site (its instruction), how many times the device
// has executed it before (so that a collective in a while loop meets once per
// iteration), and its group. Each device takes part through its own Member.
//
// Stuck runs are detected, not timed out: a device is running until it waits at a
// meeting or finishes; when no device is running while a meeting is incomplete, no
// device can complete it, and every waiting device fails with ErrMismatch.
type Rendezvous struct {
	topo     Topology
	mu       sync.Mutex
	running  int
	members  []*Member
	meetings map[meetKey]*meeting
	failed   error // once set, every Exchange fails with it
}

type meetKey struct {
	site  any
	count int
	first int // the group's first device: groups of one site are disjoint
}

type meeting struct {
	label  string // the instruction and its execution, for errors
	group  []int
	values [][]*hlo.Literal // by position in the group; nil: not arrived
	done   chan struct{}
	err    error
}

// Member is one device's handle on a Rendezvous; it is used from one goroutine.
type Member struct {
	r        *Rendezvous
	device   int
	counts   map[any]int
	waiting  *meeting // under r.mu
	finished bool     // under r.mu
}

// NewRendezvous returns the meeting place of a run on t's devices, every one of
// them running.
func NewRendezvous(t Topology) *Rendezvous {
	r := &Rendezvous{topo: t, running: t.Devices(), meetings: map[meetKey]*meeting{}}
	for d := range t.Devices() {
		r.members = append(r.members, &Member{r: r, device: d, counts: map[any]int{}})
	}
	return r
}

// Member is device d's handle.
func (r *Rendezvous) Member(d int) *Member { return r.members[d] }

// Device is the member's flat device id.
func (m *Member) Device() int { return m.device }

// Exchange gives the device's values at the site's next execution to its group
// and returns every member's values, by position in the group, once all have
// arrived. label names the collective in errors. The values are shared, never
// copied: no member may modify them. A nil Member is a one-device run, where
// only groups of one meet.
func (m *Member) Exchange(ctx context.Context, site any, label string, group []int, v []*hlo.Literal) ([][]*hlo.Literal, error) {
	if len(group) == 1 {
		return [][]*hlo.Literal{v}, nil
	}
	if m == nil {
		return nil, fmt.Errorf("%s: a group of %d devices on a one-device run", label, len(group))
	}
	pos := slices.Index(group, m.device)
	if pos < 0 {
		return nil, fmt.Errorf("%s: %s is not in its group %v", label, m.r.topo.Name(m.device), group)
	}
	count := m.counts[site]
	m.counts[site]++
	mt, err := m.arrive(meetKey{site, count, group[0]}, fmt.Sprintf("%s (execution %d)", label, count+1), group, pos, v)
	if err != nil || mt == nil {
		return nil, err
	}
	return m.wait(ctx, mt)
}

// arrive records the values; it returns the meeting to wait for, or nil with the
// values when the device completed it (or an error).
func (m *Member) arrive(key meetKey, label string, group []int, pos int, v []*hlo.Literal) (*meeting, error) {
	r := m.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed != nil {
		return nil, r.failed
	}
	mt := r.meetings[key]
	if mt == nil {
		mt = &meeting{label: label, group: group, values: make([][]*hlo.Literal, len(group)), done: make(chan struct{})}
		r.meetings[key] = mt
	} else if !slices.Equal(mt.group, group) {
		err := fmt.Errorf("%w: %s: %s meets group %v, another member group %v", ErrMismatch, label, r.topo.Name(m.device), group, mt.group)
		r.fail(err)
		return nil, err
	}
	mt.values[pos] = v
	if !slices.ContainsFunc(mt.values, func(x []*hlo.Literal) bool { return x == nil }) {
		delete(r.meetings, key)
		r.running += len(group) - 1 // the waiters run again
		for _, d := range group {
			r.members[d].waiting = nil
		}
		close(mt.done)
		return mt, nil
	}
	m.waiting = mt
	r.running--
	r.checkStuck()
	return mt, nil
}

func (m *Member) wait(ctx context.Context, mt *meeting) ([][]*hlo.Literal, error) {
	select {
	case <-mt.done:
	case <-ctx.Done():
		m.r.mu.Lock()
		m.r.fail(fmt.Errorf("%s: %w", mt.label, ctx.Err()))
		m.r.mu.Unlock()
		<-mt.done
	}
	if mt.err != nil {
		return nil, mt.err
	}
	return mt.values, nil
}

// Finish marks the device done (with a result or an error): it reaches no more
// meetings. Every member must finish, or the others may wait for it.
func (m *Member) Finish() {
	if m == nil {
		return
	}
	r := m.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.finished {
		return
	}
	m.finished = true
	r.running--
	r.checkStuck()
}

// checkStuck fails the run when no device runs and a meeting waits.
func (r *Rendezvous) checkStuck() {
	if r.running > 0 || len(r.meetings) == 0 || r.failed != nil {
		return
	}
	var msgs []string
	for _, mt := range r.meetings {
		msgs = append(msgs, r.describe(mt))
	}
	slices.Sort(msgs)
	r.fail(fmt.Errorf("%w: %s", ErrMismatch, strings.Join(msgs, "; ")))
}

// describe says, of one incomplete meeting, where its missing members are.
func (r *Rendezvous) describe(mt *meeting) string {
	var missing []string
	for pos, d := range mt.group {
		if mt.values[pos] != nil {
			continue
		}
		m := r.members[d]
		switch {
		case m.finished:
			missing = append(missing, r.topo.Name(d)+" finished without reaching it")
		case m.waiting != nil:
			missing = append(missing, r.topo.Name(d)+" waits at "+m.waiting.label)
		}
	}
	return fmt.Sprintf("%s in group %v: %s", mt.label, mt.group, strings.Join(missing, ", "))
}

// fail ends the run: every meeting waiting now and every later Exchange fail.
func (r *Rendezvous) fail(err error) {
	if r.failed != nil {
		return
	}
	r.failed = err
	for key, mt := range r.meetings {
		mt.err = err
		close(mt.done)
		delete(r.meetings, key)
	}
}
