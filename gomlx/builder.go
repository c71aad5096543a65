package gomlx

import (
	"fmt"
	"reflect"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/notimplemented"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/pkg/errors"

	"github.com/vkxla/vkxla/hlo"
)

// Builder builds one GoMLX computation as a vkxla HLO module: every op is one
// or a few hlo.Builder calls.
type Builder struct {
	// The embedded builder answers, with GoMLX's not-implemented error naming
	// the op, only the ops this file set leaves out (docs/gomlx.md lists them).
	notimplemented.Builder
	backend *Backend
	name    string
	hb      *hlo.Builder
	params  []*Node
	names   []string
	done    bool
}

var _ backends.Builder = (*Builder)(nil)

// Node is an op under construction: one HLO instruction of the builder.
type Node struct {
	builder *Builder
	in      *hlo.Instruction
	shape   shapes.Shape
}

// Instruction is the HLO instruction the node built.
func (n *Node) Instruction() *hlo.Instruction { return n.in }

func newBuilder(b *Backend, name string) *Builder {
	bl := &Builder{backend: b, name: name, hb: hlo.NewBuilder(hloName(name))}
	bl.Builder.ErrFn = notImplemented
	return bl
}

// notImplemented is GoMLX's not-implemented error, naming the op.
func notImplemented(op backends.OpType) error {
	return errors.Wrapf(notimplemented.NotImplementedError, "vkxla backend: op %s", op)
}

// hloName makes a GoMLX computation name a valid HLO identifier.
func hloName(name string) string {
	out := []byte{}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '.' || c == '-' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	if len(out) == 0 || (out[0] >= '0' && out[0] <= '9') || out[0] == '.' || out[0] == '-' {
		out = append([]byte("m_"), out...)
	}
	return string(out)
}

// Name is the computation's name.
func (b *Builder) Name() string { return b.name }

// node checks that op is a node of this builder.
func (b *Builder) node(op backends.Op, what string) (*Node, error) {
	n, ok := op.(*Node)
	if !ok || n == nil {
		return nil, fmt.Errorf("vkxla backend: %s: operand of type %T is not a vkxla op", what, op)
	}
	if n.builder != b {
		return nil, fmt.Errorf("vkxla backend: %s: operand built by another computation (%q, not %q)", what, n.builder.name, b.name)
	}
	return n, nil
}

func (b *Builder) nodes(what string, ops ...backends.Op) ([]*Node, error) {
	if b.done {
		return nil, fmt.Errorf("vkxla backend: %s: computation %q was already compiled", what, b.name)
	}
	out := make([]*Node, len(ops))
	for i, op := range ops {
		n, err := b.node(op, what)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// wrap makes in a node, or returns the builder's error (hlo.Builder's errors are
// sticky and name the op, its operands and what was wrong).
func (b *Builder) wrap(what string, in *hlo.Instruction) (*Node, error) {
	if in == nil {
		err := b.hb.Err()
		if err == nil {
			err = fmt.Errorf("no instruction")
		}
		return nil, fmt.Errorf("vkxla backend: %s: %w", what, err)
	}
	s, err := gomlxShape(in.Shape)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: %s: %w", what, err)
	}
	return &Node{builder: b, in: in, shape: s}, nil
}

// OpShape returns an op's shape.
func (b *Builder) OpShape(op backends.Op) (shapes.Shape, error) {
	n, err := b.node(op, "OpShape")
	if err != nil {
		return shapes.Invalid(), err
	}
	return n.shape, nil
}

// Parameter adds the computation's next parameter.
func (b *Builder) Parameter(name string, shape shapes.Shape, sharding *backends.ShardingSpec) (backends.Op, error) {
	if sharding != nil {
		return nil, fmt.Errorf("vkxla backend: Parameter %q: sharding specs need several devices: %w", name, notImplemented(backends.OpTypeParameter))
	}
	if _, err := b.nodes("Parameter"); err != nil {
		return nil, err
	}
	hs, err := hloShape(shape)
	if err != nil {
		return nil, err
	}
	n, err := b.wrap("Parameter "+name, b.hb.Parameter(hs, fmt.Sprintf("p%d", len(b.params))))
	if err != nil {
		return nil, err
	}
	b.params = append(b.params, n)
	b.names = append(b.names, name)
	return n, nil
}

// Constant adds a constant of the flat values with dims.
func (b *Builder) Constant(flat any, dims ...int) (backends.Op, error) {
	if _, err := b.nodes("Constant"); err != nil {
		return nil, err
	}
	v := reflect.ValueOf(flat)
	if v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("vkxla backend: Constant: flat must be a slice, got %T", flat)
	}
	_, dt, err := flatBytes(flat)
	if err != nil {
		return nil, err
	}
	s := shapes.Make(dt, dims...)
	if s.Size() != v.Len() {
		return nil, fmt.Errorf("vkxla backend: Constant: %d values for dimensions %v", v.Len(), dims)
	}
	lit, err := literalOf(flat, s)
	if err != nil {
		return nil, err
	}
	return b.wrap("Constant", b.hb.Constant(lit))
}

// Identity returns x itself: HLO values are immutable.
func (b *Builder) Identity(x backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Identity", x)
	if err != nil {
		return nil, err
	}
	return ns[0], nil
}

// Compile finishes the module, with the outputs in order as its result, and
// compiles it.
func (b *Builder) Compile(outputs []backends.Op, shardings []*backends.ShardingSpec) (backends.Executable, error) {
	if len(shardings) != 0 {
		return nil, fmt.Errorf("vkxla backend: Compile %q: output shardings need several devices", b.name)
	}
	outs, err := b.nodes("Compile", outputs...)
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("vkxla backend: Compile %q: a computation needs at least one output", b.name)
	}
	b.done = true
	root := outs[0].in
	if len(outs) != 1 {
		ins := make([]*hlo.Instruction, len(outs))
		for i, o := range outs {
			ins[i] = o.in
		}
		root = b.hb.Tuple(ins...)
	}
	m, err := b.hb.Build(root)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: Compile %q: %w", b.name, err)
	}
	return newExecutable(b, m, outs)
}

// DistributedSPMD is not supported: one device.
func (b *Builder) DistributedSPMD(numDevices int) error {
	if numDevices == 1 {
		return nil
	}
	return fmt.Errorf("vkxla backend: DistributedSPMD over %d devices: %w", numDevices, notimplemented.NotImplementedError)
}

// DistributedAutoSharding is not supported: one device.
func (b *Builder) DistributedAutoSharding(...backends.Mesh) error {
	return fmt.Errorf("vkxla backend: DistributedAutoSharding: %w", notimplemented.NotImplementedError)
}

// DeviceAssignment accepts device 0 only.
func (b *Builder) DeviceAssignment(devices ...backends.DeviceNum) error {
	if len(devices) == 1 && devices[0] == 0 {
		return nil
	}
	return fmt.Errorf("vkxla backend: DeviceAssignment %v: the backend has one device (0)", devices)
}
