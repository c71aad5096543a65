package passes

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// ThreadRngState makes the RNG state a value of the program: the entry
// computation gains a last parameter, the run's u64[2] state, and its root becomes
// (root, the state after the run). Each rng-get-and-update-state becomes the
// current state advanced by the deltas of the ones before it, in instruction order
// (cpuref's evaluation order, which takes the same offsets). A while loop whose
// body draws carries the state as a last element of its tuple: the body starts
// from it and returns it advanced by what the iteration drew, so each iteration
// draws afresh, as cpuref's do. The runtime feeds the parameter from the
// executable handle and keeps the state the run returns (docs/runtime.md).
//
// The state is threaded through the entry computation and while bodies: a draw in
// a loop condition, a conditional branch, a called computation, or a body that two
// loops share is ErrUnsupported, naming it.
func ThreadRngState(m *hlo.Module, _ Config) (bool, error) {
	uses, err := rngStateUsers(m)
	if err != nil || !uses[m.Entry] {
		return false, err
	}
	t := &stateThreader{names: moduleNames(m), uses: uses}
	e := m.Entry
	start := &hlo.Instruction{Name: t.names.fresh("rng-state"), Op: hlo.OpParameter, Shape: hlo.RngStateShape.Clone(),
		Attrs: hlo.Attributes{ParameterNumber: int64(len(e.Params))}}
	e.Params = append(e.Params, start)
	e.Instructions = append([]*hlo.Instruction{start}, e.Instructions...)
	end, err := t.thread(e, start)
	if err != nil {
		return false, err
	}
	t.setRoot(e, t.tuple(e, "root", e.Root, end))
	// The program's outputs are now the root's element 0: input_output_alias names
	// its output leaves from there.
	for i := range m.InputOutputAlias {
		m.InputOutputAlias[i].Output = append([]int64{0}, m.InputOutputAlias[i].Output...)
	}
	return true, nil
}

// rngStateUsers marks the computations that draw from the state, directly or
// through the while loops they run, and refuses draws the state cannot reach.
func rngStateUsers(m *hlo.Module) (map[*hlo.Computation]bool, error) {
	uses := map[*hlo.Computation]bool{}
	callers := map[*hlo.Computation]int{}
	for _, c := range m.Computations { // callees come before their callers
		for _, in := range c.Instructions {
			if in.Op == hlo.OpRngGetAndUpdateState {
				uses[c] = true
			}
			for role, k := range in.Called {
				callers[k]++
				if !uses[k] {
					continue
				}
				if in.Op != hlo.OpWhile || role != 1 {
					return nil, fmt.Errorf("%w: %s (%v) runs computation %s, which draws from the RNG state (%s): the state is threaded through the entry computation and while bodies only",
						hlo.ErrUnsupported, in.Name, in.Op, k.Name, firstDraw(k))
				}
				uses[c] = true
			}
		}
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op == hlo.OpWhile && uses[in.Called[1]] && (callers[in.Called[0]] > 1 || callers[in.Called[1]] > 1) {
				return nil, fmt.Errorf("%w: while %s draws from the RNG state (%s) in a body or condition other loops run too",
					hlo.ErrUnsupported, in.Name, firstDraw(in.Called[1]))
			}
		}
	}
	return uses, nil
}

// firstDraw names the first rng-get-and-update-state c runs (for errors).
func firstDraw(c *hlo.Computation) string {
	for _, in := range c.Instructions {
		if in.Op == hlo.OpRngGetAndUpdateState {
			return in.Name
		}
		for _, k := range in.Called {
			if name := firstDraw(k); name != "" {
				return name
			}
		}
	}
	return ""
}

// stateThreader rewrites the computations that draw.
type stateThreader struct {
	names *nameSet
	uses  map[*hlo.Computation]bool
}

// thread rewrites c's draws, the state at c's start being s (an instruction of c),
// and returns the state at its end.
func (t *stateThreader) thread(c *hlo.Computation, s *hlo.Instruction) (*hlo.Instruction, error) {
	cur, pending := s, uint64(0) // the state is cur advanced by pending
	_, err := replaceInOrder(c, func(in *hlo.Instruction) ([]*hlo.Instruction, *hlo.Instruction, error) {
		switch {
		case in.Op == hlo.OpRngGetAndUpdateState:
			insert, at, err := t.advance(in.Name, cur, pending)
			pending += uint64(in.Attrs.RngDelta)
			return insert, at, err
		case in.Op == hlo.OpWhile && t.uses[in.Called[1]]:
			insert, at, err := t.advance(in.Name, cur, pending)
			if err != nil {
				return nil, nil, err
			}
			loop, replaced, after, err := t.threadWhile(in, at)
			cur, pending = after, 0
			return append(insert, loop...), replaced, err
		}
		return nil, nil, nil
	})
	if err != nil {
		return nil, err
	}
	insert, end, err := t.advance(c.Name+".rng-state", cur, pending)
	c.Instructions = append(c.Instructions, insert...)
	return end, err
}

// advance is s advanced by offset: s itself, or the instructions of the 128-bit
// add (named after from) and their result.
func (t *stateThreader) advance(from string, s *hlo.Instruction, offset uint64) ([]*hlo.Instruction, *hlo.Instruction, error) {
	if offset == 0 {
		return nil, s, nil
	}
	body, err := hlo.RngStateAt(offset)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", from, err)
	}
	insert, at := inline(body, from, []*hlo.Instruction{s}, nil, t.names)
	return insert, at, nil
}

// threadWhile gives loop w (whose body draws) the state s as a last element of
// its tuple: it returns the new instructions, the tuple that stands for w's old
// value, and the state after the loop.
func (t *stateThreader) threadWhile(w, s *hlo.Instruction) (insert []*hlo.Instruction, replaced, after *hlo.Instruction, err error) {
	if !w.Shape.IsTuple() {
		return nil, nil, nil, fmt.Errorf("%w: while %s draws from the RNG state (%s) but carries %v; the state joins a tuple loop state",
			hlo.ErrUnsupported, w.Name, firstDraw(w.Called[1]), w.Shape)
	}
	n := len(w.Shape.Elems)
	wide := hlo.MakeTuple(append(append([]hlo.Shape{}, w.Shape.Elems...), hlo.RngStateShape)...).Clone()
	cond, body := w.Called[0], w.Called[1]
	t.widenParam(cond, wide)
	if err := t.threadBody(body, wide); err != nil {
		return nil, nil, nil, err
	}
	var c hlo.Computation // collects the caller's new instructions
	init := t.tuple(&c, w.Name+".init", append(t.elements(&c, w.Operands[0], n), s)...)
	loop := &hlo.Instruction{Name: w.Name, Op: hlo.OpWhile, Shape: wide, Operands: []*hlo.Instruction{init},
		Attrs: w.Attrs.Clone(), Called: w.Called}
	c.Instructions = append(c.Instructions, loop)
	replaced = t.tuple(&c, w.Name+".value", t.elements(&c, loop, n)...)
	after = t.gte(&c, loop, int64(n))
	return c.Instructions, replaced, after, nil
}

// threadBody widens the body's parameter, threads its draws from the state
// element, and returns the state it ends at as the root's last element.
func (t *stateThreader) threadBody(body *hlo.Computation, wide hlo.Shape) error {
	s := t.widenParam(body, wide)
	end, err := t.thread(body, s)
	if err != nil {
		return err
	}
	n := len(wide.Elems) - 1
	t.setRoot(body, t.tuple(body, body.Name+".root", append(t.elements(body, body.Root, n), end)...))
	return nil
}

// widenParam gives c's parameter the wide loop state: the old parameter's uses
// read a tuple of the wide one's first elements; it returns the state element.
func (t *stateThreader) widenParam(c *hlo.Computation, wide hlo.Shape) *hlo.Instruction {
	old := c.Params[0]
	p := &hlo.Instruction{Name: old.Name, Op: hlo.OpParameter, Shape: wide, Attrs: old.Attrs.Clone()}
	var head hlo.Computation
	head.Instructions = []*hlo.Instruction{p}
	n := len(wide.Elems) - 1
	value := t.tuple(&head, old.Name+".value", t.elements(&head, p, n)...)
	s := t.gte(&head, p, int64(n))
	for _, in := range c.Instructions {
		for i, x := range in.Operands {
			if x == old {
				in.Operands[i] = value
			}
		}
	}
	if c.Root == old {
		c.Root = value
	}
	rest := c.Instructions[:0:0]
	for _, in := range c.Instructions {
		if in != old {
			rest = append(rest, in)
		}
	}
	c.Params[0] = p
	c.Instructions = append(head.Instructions, rest...)
	c.Renumber()
	return s
}

// elements appends to c a get-tuple-element of each of x's first n elements.
func (t *stateThreader) elements(c *hlo.Computation, x *hlo.Instruction, n int) []*hlo.Instruction {
	out := make([]*hlo.Instruction, n)
	for i := range out {
		out[i] = t.gte(c, x, int64(i))
	}
	return out
}

func (t *stateThreader) gte(c *hlo.Computation, x *hlo.Instruction, i int64) *hlo.Instruction {
	g := &hlo.Instruction{Name: t.names.fresh(x.Name + ".element"), Op: hlo.OpGetTupleElement,
		Shape: x.Shape.Elems[i].Clone(), Operands: []*hlo.Instruction{x}, Attrs: hlo.Attributes{TupleIndex: i}}
	c.Instructions = append(c.Instructions, g)
	return g
}

func (t *stateThreader) tuple(c *hlo.Computation, name string, xs ...*hlo.Instruction) *hlo.Instruction {
	shapes := make([]hlo.Shape, len(xs))
	for i, x := range xs {
		shapes[i] = x.Shape
	}
	tu := &hlo.Instruction{Name: t.names.fresh(name), Op: hlo.OpTuple, Shape: hlo.MakeTuple(shapes...).Clone(),
		Operands: xs}
	c.Instructions = append(c.Instructions, tu)
	return tu
}

// setRoot makes r (appended last) c's root.
func (t *stateThreader) setRoot(c *hlo.Computation, r *hlo.Instruction) {
	c.Root = r
	c.Renumber()
}
