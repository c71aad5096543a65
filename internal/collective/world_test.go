package collective

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// memWorld is n processes in one: AllGather waits until all n have called it, as
// an MPI collective does.
type memWorld struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	gen   int
	in    [][]byte
	out   [][]byte
	count int
}

func newMemWorld(n int) *memWorld {
	w := &memWorld{n: n, in: make([][]byte, n)}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// rankOf is process r's view of the world.
type rankOf struct {
	w *memWorld
	r int
}

func (p rankOf) Rank() int { return p.r }
func (p rankOf) Size() int { return p.w.n }
func (p rankOf) AllGather(_ context.Context, b []byte) ([][]byte, error) {
	w := p.w
	w.mu.Lock()
	defer w.mu.Unlock()
	gen := w.gen
	w.in[p.r] = append([]byte(nil), b...)
	if w.count++; w.count == w.n {
		w.out, w.in, w.count = w.in, make([][]byte, w.n), 0
		w.gen++
		w.cond.Broadcast()
	}
	for w.gen == gen {
		w.cond.Wait()
	}
	return slices2(w.out), nil
}

func slices2(xs [][]byte) [][]byte {
	out := make([][]byte, len(xs))
	for i, x := range xs {
		out[i] = append([]byte(nil), x...)
	}
	return out
}

// addF32 is a to_apply of f32 addition, for the tests' reductions.
func addF32(*hlo.Computation) (BinaryFunc, error) {
	return func(a, b uint64) (uint64, error) {
		return uint64(math.Float32bits(math.Float32frombits(uint32(a)) + math.Float32frombits(uint32(b)))), nil
	}, nil
}

const worldModule = `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  r = f32[4] all-reduce(x), replica_groups={{0,2},{1}}, to_apply=add
  g = f32[12] all-gather(x), replica_groups={{0,1,2}}, dimensions={0}
  ROOT t = (f32[4], f32[12]) tuple(r, g)
}`

// Over a World, each device computes what it computes at the in-process
// rendezvous, bit for bit (one Eval), a group of one included.
func TestWorldMemberMatchesRendezvous(t *testing.T) {
	m, err := hlo.ParseModule(worldModule)
	require.NoError(t, err)
	topo := Topology{Replicas: 3, Partitions: 1}
	var colls []*hlo.Instruction
	for _, in := range m.Entry.Instructions {
		if in.Op == hlo.OpAllReduce || in.Op == hlo.OpAllGather {
			colls = append(colls, in)
		}
	}
	input := func(d int) []*hlo.Literal {
		return []*hlo.Literal{hlo.MustFromSlice([]int64{4}, []float32{float32(d) + 0.1, 1e7, -3, float32(d * d)})}
	}
	run := func(member func(d int) Exchanger, finish func(d int) error) [][]*hlo.Literal {
		outs := make([][]*hlo.Literal, 3)
		var wg sync.WaitGroup
		for d := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dev := Device{Topology: topo, ID: d, Member: member(d), Reduce: addF32}
				for _, in := range colls {
					y, err := dev.Eval(context.Background(), in, input(d))
					assert.NoError(t, err, "device %d %s", d, in.Name)
					outs[d] = append(outs[d], y)
				}
				assert.NoError(t, finish(d), "device %d", d)
			}()
		}
		wg.Wait()
		return outs
	}
	rv := NewRendezvous(topo)
	want := run(func(d int) Exchanger { return rv.Member(d) }, func(d int) error { rv.Member(d).Finish(); return nil })
	w := newMemWorld(3)
	members := make([]*WorldMember, 3)
	for d := range members {
		members[d], err = NewWorldMember(rankOf{w, d}, topo)
		require.NoError(t, err)
	}
	got := run(func(d int) Exchanger { return members[d] },
		func(d int) error { return members[d].Finish(context.Background(), nil) })
	for d := range want {
		for k := range want[d] {
			assert.Equal(t, want[d][k].Bytes(), got[d][k].Bytes(), "device %d, %s", d, colls[k].Name)
		}
	}
}

// worldRun runs f on each of n devices' WorldMember, then Finish with f's error,
// and returns each device's errors (f's, Finish's).
func worldRun(t *testing.T, n int, f func(d int, m *WorldMember) error) (runErrs, finishErrs []error) {
	w := newMemWorld(n)
	runErrs, finishErrs = make([]error, n), make([]error, n)
	var wg sync.WaitGroup
	for d := range n {
		m, err := NewWorldMember(rankOf{w, d}, Topology{Replicas: n, Partitions: 1})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runErrs[d] = f(d, m)
			finishErrs[d] = m.Finish(context.Background(), runErrs[d])
		}()
	}
	wg.Wait()
	return runErrs, finishErrs
}

func exchange(m *WorldMember, site string, group []int, lits ...*hlo.Literal) error {
	_, err := m.Exchange(context.Background(), site, "all-reduce %"+site, group, lits)
	return err
}

var two = hlo.MustFromSlice([]int64{2}, []float32{1, 2})

// A device that runs a collective one time more than the other: both stop, with
// where each one was, at the round where they part; none waits.
func TestWorldMemberMismatch(t *testing.T) {
	runErrs, finishErrs := worldRun(t, 2, func(d int, m *WorldMember) error {
		for range d + 2 {
			if err := exchange(m, "y", []int{0, 1}, two); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, runErrs[0], "device 0 finished its two executions")
	assert.ErrorIs(t, finishErrs[0], ErrMismatch)
	assert.ErrorIs(t, runErrs[1], ErrMismatch)
	for _, err := range []error{finishErrs[0], runErrs[1]} {
		assert.Contains(t, err.Error(), "device 0 (replica 0, partition 0) finished; device 1 (replica 1, partition 0) waits at all-reduce %y (execution 3)")
	}
	assert.ErrorIs(t, finishErrs[1], ErrMismatch, "Finish after the failed round holds no other round")
}

func TestWorldMemberDisagreements(t *testing.T) {
	four := hlo.MustFromSlice([]int64{4}, []float32{1, 2, 3, 4})
	for _, c := range []struct {
		name string
		f    func(d int, m *WorldMember) error
		want string
	}{
		{"groups", func(d int, m *WorldMember) error {
			return exchange(m, "y", [][]int{{0, 1}, {1}}[d], two)
		}, "device 0 (replica 0, partition 0) meets group [0 1], device 1 (replica 1, partition 0) group [1]"},
		{"sizes", func(d int, m *WorldMember) error {
			return exchange(m, "y", []int{0, 1}, []*hlo.Literal{two, four}[d])
		}, "operands are [8] bytes, device 1 (replica 1, partition 0)'s [16]"},
		{"sites", func(d int, m *WorldMember) error {
			return exchange(m, []string{"y", "z"}[d], []int{0, 1}, two)
		}, "device 0 (replica 0, partition 0) waits at all-reduce %y (execution 1); device 1 (replica 1, partition 0) waits at all-reduce %z (execution 1)"},
		{"a failed device", func(d int, m *WorldMember) error {
			if d == 1 {
				return errors.New("a kernel failed")
			}
			return exchange(m, "y", []int{0, 1}, two)
		}, "device 1 (replica 1, partition 0) stopped with an error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			runErrs, finishErrs := worldRun(t, 2, c.f)
			for d := range 2 {
				err := runErrs[d]
				if err == nil || c.name == "a failed device" && d == 1 {
					err = finishErrs[d]
				}
				require.ErrorIs(t, err, ErrMismatch, "device %d", d)
				assert.Contains(t, err.Error(), c.want, "device %d", d)
			}
		})
	}
}

func TestWorldMemberSize(t *testing.T) {
	_, err := NewWorldMember(rankOf{newMemWorld(2), 0}, Topology{Replicas: 3, Partitions: 1})
	assert.ErrorIs(t, err, ErrInvalidGroups)
	assert.Contains(t, err.Error(), "2 processes for 3 replicas × 1 partitions")
}
