package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// spirvVersion is the SPIR-V version of every kernel: the newest that Vulkan 1.1
// consumes, and the first with subgroup operations in core.
const spirvVersion = spirv.Version1_3

// kernel is one compute kernel under construction: its module, its entry function,
// the storage buffers it binds (in binding order, with the program argument each one
// is) and the integer type of its index arithmetic.
type kernel struct {
	t     Target
	name  string
	m     *spirv.Module
	f     *spirv.Function
	local uint32 // workgroup size (1-D)
	idxT  spirv.ID
	bufs  []spirv.Buffer // one per argument, in bind order
	dts   []hlo.DType    // element type of each argument
	args  []Arg
	// argBytes is an argument's size, which decides how the kernel reaches it
	// (Target.Path); layout records that per argument, bindings counts the
	// descriptor bindings declared, table is the address table (Var 0 until an
	// argument needs it).
	argBytes func(Arg) int64
	layout   []ArgBinding
	bindings int
	table    spirv.Buffer
	tableAt  int  // the table's binding
	slots    int  // address slots used
	splits   bool // some argument is split across bindings
	err      error
	// linear remembers, for each multi-index made by delinearize, the linear
	// index it came from, so that reading an operand of the output's dims costs no
	// index arithmetic. (Only delinearize's input is remembered: it dominates the
	// multi-index, whereas a linearize result may live in a branch.)
	linear map[string]spirv.ID
	// lanes maps the linear index of each element of a vec4 group (elementalVec4)
	// to the group's vec4 index and the element's lane; vec4s holds the vec4 alias
	// of each input binding read that way.
	lanes map[spirv.ID]lane
	vec4s map[int]spirv.Buffer
	// vec4DTs is the dtype each vec4 alias holds (by variable).
	vec4DTs map[spirv.ID]hlo.DType
	// iters estimates the loop iterations one invocation runs; iterScale is the
	// trip count of the loops enclosing the point of emission.
	iters, iterScale int64
	// tables holds the Private constant tables declared so far, by initialiser.
	tables map[spirv.ID]spirv.ID
	// texels are the inputs read through uniform texel buffers (texel.go).
	texels []texelView
	// part is the part type (f32, f64) of the complex value being lowered
	// (complex_part.go).
	part hlo.DType
}

// newKernel starts a kernel with a 1-D workgroup of local invocations. wide selects
// 64-bit index arithmetic.
func newKernel(t Target, name string, local uint32, wide bool) *kernel {
	m := spirv.NewModule(spirvVersion)
	k := &kernel{t: t, name: name, m: m, local: local, linear: map[string]spirv.ID{}, iterScale: 1,
		lanes: map[spirv.ID]lane{}, vec4s: map[int]spirv.Buffer{}, vec4DTs: map[spirv.ID]hlo.DType{}}
	if wide {
		k.idxT = m.TypeInt(64, true)
	} else {
		k.idxT = m.TypeInt(32, true)
	}
	k.f = m.Kernel("main", local, 1, 1)
	return k
}

// failf records the kernel's first error.
func (k *kernel) failf(format string, args ...any) {
	if k.err == nil {
		k.err = fmt.Errorf(format, args...)
	}
}

// bind declares program argument a, holding elements of dt, as the kernel's next
// buffer, reached the way its size asks on this target (Target.Path): one
// descriptor binding, consecutive bindings of Target.SplitBytes each, or its device
// address in the kernel's address table. Every emitter reads and writes through the
// returned spirv.Buffer and so works on all three.
func (k *kernel) bind(a Arg, dt hlo.DType, access spirv.Access) spirv.Buffer {
	var bytes int64
	if k.argBytes != nil {
		bytes = k.argBytes(a)
	}
	b, lay := k.declare(a.String(), dt, access, bytes)
	k.bufs = append(k.bufs, b)
	k.dts = append(k.dts, dt)
	k.args = append(k.args, a)
	k.layout = append(k.layout, lay)
	return b
}

// declare declares a buffer of bytes bytes on its path and says how it is bound.
func (k *kernel) declare(name string, dt hlo.DType, access spirv.Access, bytes int64) (spirv.Buffer, ArgBinding) {
	elem := k.storeType(dt)
	path, chunk := k.t.Path(bytes), k.t.SplitBytes()
	if path == PathSplit && chunk < int64(dt.Size()) {
		k.failf("%s: the target's maxStorageBufferRange of %d bytes is below the split granule %d", name, k.t.MaxStorageBufferRange, SplitGranule)
		path = PathBinding // declared whole so that emission goes on; the kernel is refused
	}
	first := k.bindings
	switch path {
	case PathAddress:
		slot := k.slots
		k.slots++
		return k.f.AddressedBuffer(name, k.addressTable(), uint32(slot), elem), ArgBinding{Path: path, Slot: slot}
	case PathSplit:
		pieces := k.t.Bindings(bytes)
		k.bindings += pieces
		k.splits = true
		return k.m.SplitStorageBuffer(name, 0, uint32(first), pieces, chunk/int64(dt.Size()), elem, access),
			ArgBinding{Path: path, Binding: first, Pieces: pieces}
	}
	k.bindings++
	return k.m.StorageBuffer(name, 0, uint32(first), elem, access), ArgBinding{Path: path, Binding: first, Pieces: 1}
}

// addressTable is the kernel's table of device addresses (u64, read-only),
// declared at the next binding when the first argument is reached by address.
func (k *kernel) addressTable() spirv.Buffer {
	if k.table.Var == 0 {
		k.tableAt = k.bindings
		k.table = k.m.StorageBuffer("addresses", 0, uint32(k.tableAt), k.m.TypeInt(64, false), spirv.ReadOnly)
		k.bindings++
	}
	return k.table
}

// view is another element type's view of argument i's memory (a vec4 view).
func (k *kernel) view(i int, name string, elem spirv.ID) spirv.Buffer {
	return k.f.View(k.bufs[i], name, elem)
}

// finish assembles the kernel into a dispatch over groups workgroups.
func (k *kernel) finish(groups [3]uint32) (Dispatch, error) {
	k.checkIterations()
	k.checkBindings()
	k.declareFloatControls()
	if k.err != nil {
		return Dispatch{}, k.err
	}
	texels := k.bindTexels()
	words, err := k.m.Assemble()
	if err != nil {
		return Dispatch{}, fmt.Errorf("kernel %s: %w", k.name, err)
	}
	kern := &Kernel{
		Name: k.name, SPIRV: spirv.Bytes(words), EntryPoint: "main",
		LocalSize: [3]uint32{k.local, 1, 1}, Bindings: k.bindings,
		Layout: append([]ArgBinding(nil), k.layout...), AddressTable: -1, Texels: texels,
	}
	if k.table.Var != 0 {
		kern.AddressTable = k.tableAt
	}
	return Dispatch{Kernel: kern, Args: append([]Arg(nil), k.args...), Groups: groups}, nil
}

// declareFloatControls asks for SignedZeroInfNanPreserve at each float width the
// kernel computes in where the target honours it: without it a driver may fold
// +0 + x into x, so that a sum of -0 products, which starts at +0 as cpuref's
// does, gives -0 (and 1/x -inf instead of +inf). SPIR-V 1.3 needs the extension.
func (k *kernel) declareFloatControls() {
	m, want := k.m, k.t.SignedZeroInfNanPreserve
	for _, w := range []struct {
		bits uint32
		ok   bool
	}{
		{16, want.F16 && m.HasCapability(spirv.CapabilityFloat16)},
		{32, want.F32},
		{64, want.F64 && m.HasCapability(spirv.CapabilityFloat64)},
	} {
		if !w.ok {
			continue
		}
		m.Extension("SPV_KHR_float_controls")
		m.Capability(spirv.CapabilitySignedZeroInfNanPreserve)
		m.ExecutionMode(k.f, spirv.ExecutionModeSignedZeroInfNanPreserve, w.bits)
	}
}

// ic is an index-typed constant.
func (k *kernel) ic(v int64) spirv.ID { return k.m.ConstInt(k.idxT, v) }

// constIndex is the value of an index id that is a constant (k.ic).
func (k *kernel) constIndex(id spirv.ID) (int64, bool) {
	v, ok := k.m.ConstValue(id)
	if !ok || k.m.TypeOf(id) != k.idxT {
		return 0, false
	}
	if k.m.Width(k.idxT) == 32 {
		return int64(int32(v)), true
	}
	return int64(v), true
}

// u32 is a u32 constant.
func (k *kernel) u32(v uint32) spirv.ID { return k.m.U32(v) }

// toIndex converts an integer value (any width or signedness) to the index type,
// reading it as signed or unsigned by its own type.
func (k *kernel) toIndex(v spirv.ID) spirv.ID { return k.f.Convert(k.idxT, v) }

// streamGroups caps the grid of the output loops: 2048 workgroups of 128 fill a
// large GPU (262144 invocations; an H200 runs 132 SMs × 2048 threads), and on
// lavapipe the grid-stride loop amortises the per-workgroup cost that a workgroup
// per 128 elements would pay. Measured on saxpy f32[16M] in place (session 2,
// round ratios vs saxpy_vec4, whose 64 × 4096 is the same invocation count):
// 2048 groups 1.04× in five runs, 4096 0.98–1.01×, 8192 0.89–0.91×.
const streamGroups = 2048

// gridLimit is the device's workgroup count limit in dimension d (65535, the
// least Vulkan guarantees, where the target does not say).
func (t Target) gridLimit(d int) int64 {
	if n := int64(t.MaxWorkgroupCount[d]); n > 0 {
		return n
	}
	return 65535
}

// grid is a workgroup grid of g workgroups: 1-D while the device allows, else 2-D.
func (k *kernel) grid(g int64) [3]uint32 {
	g = max(g, 1)
	limX, limY := k.t.gridLimit(0), k.t.gridLimit(1)
	if g <= limX {
		return [3]uint32{uint32(g), 1, 1}
	}
	return [3]uint32{uint32(limX), uint32(min((g+limX-1)/limX, limY)), 1}
}

// linearGroup is the workgroup's linear index in a 1-D or 2-D grid, and the grid's
// workgroup count, both read from the dispatch (NumWorkgroups).
func (k *kernel) linearGroup() (id, count spirv.ID) {
	f := k.f
	wx := k.toIndex(f.BuiltInComponent(spirv.BuiltInWorkgroupId, 0))
	wy := k.toIndex(f.BuiltInComponent(spirv.BuiltInWorkgroupId, 1))
	nx := k.toIndex(f.BuiltInComponent(spirv.BuiltInNumWorkgroups, 0))
	ny := k.toIndex(f.BuiltInComponent(spirv.BuiltInNumWorkgroups, 1))
	return f.IAdd(f.IMul(wy, nx), wx), f.IMul(nx, ny)
}

// gridStride emits `for i := id; i < n; i += stride { body(i) }` over the whole
// grid (id and stride from the dispatch) and returns the grid to dispatch: enough
// workgroups for one element per invocation up to streamGroups, and more when the
// loops one element runs would otherwise exceed the target's loop-iteration bound.
//
// Where one item per invocation fits in streamGroups workgroups, the grid covers n
// and each invocation takes at most one item: that is emitted as an `if`, not a
// loop. On llvmpipe the loop alone made a depthwise convolution kernel 1.7× slower
// (docs/results.md, "Session 6: texel reads and no grid-stride loop").
func (k *kernel) gridStride(n int64, body func(i spirv.ID)) [3]uint32 {
	local := int64(k.local)
	want := max(1, (n+local-1)/local)
	if want > streamGroups || want > k.t.gridLimit(0)*k.t.gridLimit(1) {
		return k.teamStride(n, local, func() (spirv.ID, spirv.ID) {
			return k.toIndex(k.f.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0)), k.ic(local)
		}, body)
	}
	f := k.f
	group, _ := k.linearGroup()
	i := f.IAdd(f.IMul(group, k.ic(local)), k.toIndex(f.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0)))
	k.iters += k.iterScale // as one loop iteration: the item's inner loops count themselves
	f.If(f.Less(i, k.ic(n)), func() { body(i) }, nil)
	return k.grid(want)
}

// teamStride is gridStride for teams of invocations (an invocation, or a
// subgroup): ids gives the team's index in its workgroup and the workgroup's teams
// (at run time), and team t of workgroup w takes items w·teams + t, then every
// grid's worth of teams further; the grid is sized for perGroup teams per
// workgroup.
func (k *kernel) teamStride(n, perGroup int64, ids func() (team, teams spirv.ID), body func(i spirv.ID)) [3]uint32 {
	f := k.f
	group, groups := k.linearGroup()
	team, teams := ids()
	before := k.iters
	f.Range(f.IAdd(f.IMul(group, teams), team), k.ic(n), f.IMul(groups, teams), body)
	perItem := (k.iters-before)/k.iterScale + 1 // the item's inner loops and its own iteration
	want := max(1, (n+perGroup-1)/perGroup)
	g := min(want, streamGroups)
	if lim := k.t.MaxLoopIterations; lim > 0 {
		perTeam := max(1, lim/perItem) // items one team may take
		g = max(g, min(want, (n+perTeam*perGroup-1)/(perTeam*perGroup)))
	}
	grid := k.grid(g)
	total := int64(grid[0]) * int64(grid[1]) * perGroup
	k.iters = before + (n+total-1)/total*perItem*k.iterScale
	return grid
}

// loop runs body(i) for i in [0, n) (sequentially, in one invocation).
func (k *kernel) loop(n int64, body func(i spirv.ID)) {
	k.countLoop(n, func() { k.f.Range(k.ic(0), k.ic(n), k.ic(1), body) })
}

// countLoop runs emit, which emits a loop of at most n iterations, and adds the
// iterations one invocation may run to the kernel's estimate: lavapipe silently
// ends an invocation's loops after 65535 iterations in all (Target.MaxLoopIterations),
// so a kernel that could exceed it is refused rather than allowed to be wrong.
func (k *kernel) countLoop(n int64, emit func()) {
	k.iters += n * k.iterScale
	outer := k.iterScale
	k.iterScale *= max(n, 1)
	emit()
	k.iterScale = outer
}

// checkBindings refuses a kernel with more descriptor bindings than the target
// allows in one stage: tensors split across bindings take one per piece.
func (k *kernel) checkBindings() {
	lim := k.t.MaxStorageBuffers
	if lim <= 0 || k.bindings <= lim {
		return
	}
	why := ""
	if k.splits {
		why = fmt.Sprintf(" (tensors larger than one binding take one per %d bytes: the target has no buffer device addresses)", k.t.SplitBytes())
	}
	k.failf("kernel %s needs %d storage-buffer bindings%s; the device allows %d", k.name, k.bindings, why, lim)
}

// checkIterations refuses a kernel whose loops may exceed the target's limit.
func (k *kernel) checkIterations() {
	if lim := k.t.MaxLoopIterations; lim > 0 && k.iters > lim {
		k.failf("kernel %s may run %d loop iterations in one invocation; the target stops loops after %d (lavapipe's loop limiter), so it would compute wrong results",
			k.name, k.iters, lim)
	}
}

// delinearize splits a row-major linear index into one index per dimension. Unit
// dimensions get the constant 0, so they cost nothing.
func (k *kernel) delinearize(i spirv.ID, dims []int64) []spirv.ID {
	idx := make([]spirv.ID, len(dims))
	rest := i
	for d := len(dims) - 1; d >= 0; d-- {
		switch {
		case dims[d] == 1:
			idx[d] = k.ic(0)
		case d == 0:
			idx[d] = rest
		default:
			size := k.ic(dims[d])
			idx[d] = k.f.SRem(rest, size)
			rest = k.f.SDiv(rest, size)
		}
	}
	k.linear[fmt.Sprint(idx, dims)] = i
	return idx
}

// linearize is the row-major linear index of idx in dims.
func (k *kernel) linearize(idx []spirv.ID, dims []int64) spirv.ID {
	if len(idx) != len(dims) {
		k.failf("internal: index of rank %d into dims %v", len(idx), dims)
		return k.ic(0)
	}
	if i, ok := k.linear[fmt.Sprint(idx, dims)]; ok {
		return i
	}
	var acc spirv.ID
	for d := range dims {
		if dims[d] == 1 {
			continue
		}
		if acc == 0 {
			acc = idx[d]
			continue
		}
		acc = k.f.IAdd(k.f.IMul(acc, k.ic(dims[d])), idx[d])
	}
	if acc == 0 {
		return k.ic(0)
	}
	return acc
}

// inRange is lo <= v < hi for index values.
func (k *kernel) inRange(v spirv.ID, lo, hi spirv.ID) spirv.ID {
	return k.f.LogicalAnd(k.f.GreaterEqual(v, lo), k.f.Less(v, hi))
}

// clampIndex clamps an index value to [lo, hi].
func (k *kernel) clampIndex(v spirv.ID, lo, hi int64) spirv.ID {
	f := k.f
	v = f.Select(f.Less(v, k.ic(lo)), k.ic(lo), v)
	return f.Select(f.Greater(v, k.ic(hi)), k.ic(hi), v)
}

// all is the logical and of bools (true for none).
func (k *kernel) all(conds ...spirv.ID) spirv.ID {
	var acc spirv.ID
	for _, c := range conds {
		if acc == 0 {
			acc = c
		} else {
			acc = k.f.LogicalAnd(acc, c)
		}
	}
	if acc == 0 {
		return k.m.ConstBool(true)
	}
	return acc
}

// variable is a Function variable of type t initialised to init (stored at the
// current point, which must dominate its uses).
func (k *kernel) variable(t, init spirv.ID, name string) spirv.ID {
	v := k.f.Var(t, name)
	k.f.Store(v, init)
	return v
}
