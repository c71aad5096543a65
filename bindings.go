package vkxla

import (
	"encoding/binary"
	"fmt"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// How the recorder binds a dispatch's arguments: each kernel's Layout says, per
// argument, one binding (the plan range), consecutive bindings (the range split by
// the arena into pieces of codegen's SplitBytes), or a slot of the kernel's address
// table (the range's device address). The tables are filled here, at record time:
// the arena's ranges do not move, and a run whose parameters
// are bound to other memory (donate.go) has a recording, and tables, of its own, so
// a replay needs nothing more.

// dispatchBindings are the descriptor bindings of dispatch step st, on the placed
// arena; table is its address table (unused when the kernel has none).
func (r *recorder) dispatchBindings(st plan.Step, table device.BufferRange) ([]device.BufferRange, error) {
	k := st.Kernel.Kernel
	args := make([]device.BufferRange, len(st.Args))
	for i, a := range st.Args {
		_, rng := r.placedRange(a)
		args[i] = rng.BufferRange()
	}
	split := func(i int) ([]device.BufferRange, error) {
		ar, rng := r.placedRange(st.Args[i])
		return ar.Bindings(rng, codegen.SplitGranule)
	}
	return kernelBindings(k, args, split, table)
}

// KernelBindings are the descriptor bindings of one dispatch of a generated kernel
// whose arguments are the ranges args (codegen.Dispatch.Args, in order): each
// argument's storage buffer at its Layout binding, then the uniform texel buffer
// views (Kernel.Texels) of the arguments they read. It matches KernelSpec(k); the
// runtime's recorder and the benchmark harness bind kernels with it. A kernel that
// splits an argument across bindings or reaches one by device address needs the
// arena's pieces or an address table, which only the runtime has: those are errors.
func KernelBindings(k *codegen.Kernel, args []device.BufferRange) ([]device.BufferRange, error) {
	if k.AddressTable >= 0 {
		return nil, fmt.Errorf("kernel %s: %w: it reaches arguments by device address (an address table only the runtime makes)", k.Name, ErrInvalidArgument)
	}
	return kernelBindings(k, args, nil, device.BufferRange{})
}

// kernelBindings lays out k's bindings; split gives the pieces of argument i when the
// kernel splits it across bindings (nil: such a kernel is refused).
func kernelBindings(k *codegen.Kernel, args []device.BufferRange, split func(i int) ([]device.BufferRange, error), table device.BufferRange) ([]device.BufferRange, error) {
	if len(k.Layout) != len(args) {
		return nil, fmt.Errorf("kernel %s: layout of %d arguments for %d", k.Name, len(k.Layout), len(args))
	}
	bindings := make([]device.BufferRange, k.Bindings, k.Bindings+len(k.Texels))
	for i, lay := range k.Layout {
		switch lay.Path {
		case codegen.PathAddress:
			continue
		case codegen.PathSplit:
			if split == nil {
				return nil, fmt.Errorf("kernel %s argument %d: %w: split across %d bindings (arena pieces only the runtime has)", k.Name, i, ErrInvalidArgument, lay.Pieces)
			}
			pieces, err := split(i)
			if err != nil {
				return nil, fmt.Errorf("kernel %s argument %d: %w", k.Name, i, err)
			}
			if len(pieces) != lay.Pieces {
				return nil, fmt.Errorf("kernel %s argument %d: the arena splits %d bytes into %d bindings, the kernel declares %d",
					k.Name, i, args[i].Size, len(pieces), lay.Pieces)
			}
			copy(bindings[lay.Binding:], pieces)
		default:
			bindings[lay.Binding] = args[i]
		}
	}
	if k.AddressTable >= 0 {
		bindings[k.AddressTable] = table
	}
	for _, t := range k.Texels { // after the storage buffers: views of arguments bound whole
		bindings = append(bindings, args[t.Arg])
	}
	return bindings, nil
}

// KernelSpec is the device's description of a generated kernel: the one way a
// codegen.Kernel becomes a device.KernelSpec (the runtime, the benchmarks and the
// custom-kernel path all use it), so its texel bindings are never left out.
func KernelSpec(k *codegen.Kernel) device.KernelSpec {
	spec := device.KernelSpec{EntryPoint: k.EntryPoint, Bindings: k.Bindings, PushConstantSize: k.PushConstantSize}
	for _, t := range k.Texels {
		spec.Texels = append(spec.Texels, texelFormats[t.Format])
	}
	return spec
}

// texelFormats is each codegen texel format as the device names it.
var texelFormats = map[codegen.TexelFormat]device.TexelFormat{
	codegen.TexelRGBA32U: device.TexelRGBA32U,
	codegen.TexelRGBA16U: device.TexelRGBA16U,
	codegen.TexelR32U:    device.TexelR32U,
	codegen.TexelR16U:    device.TexelR16U,
}

// addressTables makes the address tables of the dispatches among steps that reach
// arguments by device address: one device buffer (kept until the recorder closes)
// holding each table at an aligned offset. It returns each step's table range (zero
// for the others).
func (r *recorder) addressTables(steps []plan.Step) ([]device.BufferRange, error) {
	align := max(r.dev.Caps().MinStorageBufferOffsetAlignment, alloc.MinAlignment)
	tables := make([][]byte, len(steps))
	offsets := make([]int64, len(steps))
	var size int64
	for i, st := range steps {
		if st.Kind != plan.StepDispatch || st.Kernel.Kernel.AddressTable < 0 {
			continue
		}
		t, err := r.addressTable(st)
		if err != nil {
			return nil, err
		}
		tables[i], offsets[i] = t, size
		size = alloc.AlignUp(size+int64(len(t)), align)
	}
	out := make([]device.BufferRange, len(steps))
	if size == 0 {
		return out, nil
	}
	buf, err := r.dev.NewBuffer(size)
	if err != nil {
		return nil, fmt.Errorf("address tables: %w", err)
	}
	r.tables = append(r.tables, buf)
	r.tableBytes.Add(buf.Size())
	for i, t := range tables {
		if t == nil {
			continue
		}
		if err := buf.Write(offsets[i], t); err != nil {
			return nil, fmt.Errorf("address table of %s: %w", steps[i].Name, err)
		}
		out[i] = device.BufferRange{Buffer: buf, Offset: offsets[i], Size: int64(len(t))}
	}
	return out, nil
}

// addressTable is the table of dispatch step st: the device address of each
// argument it reaches by address, at that argument's slot, as little-endian u64.
func (r *recorder) addressTable(st plan.Step) ([]byte, error) {
	k := st.Kernel.Kernel
	var slots int
	for _, lay := range k.Layout {
		if lay.Path == codegen.PathAddress {
			slots = max(slots, lay.Slot+1)
		}
	}
	table := make([]byte, 8*slots)
	for i, a := range st.Args {
		if i >= len(k.Layout) || k.Layout[i].Path != codegen.PathAddress {
			continue
		}
		_, rng := r.placedRange(a)
		base, err := rng.Buffer().Address()
		if err != nil {
			return nil, fmt.Errorf("%s: kernel %s reaches argument %d by device address: %w", st.Name, k.Name, i, err)
		}
		binary.LittleEndian.PutUint64(table[8*k.Layout[i].Slot:], base+uint64(rng.Offset()))
	}
	return table, nil
}
