package codegen

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// defaultLocal is the workgroup size of the elementwise output loop.
const defaultLocal = 128

// Lower turns a kernel computation into a Program: the kernels to dispatch and the
// arguments each binds. Most computations become one kernel whose invocations each
// produce output elements through the elemental emitter (a grid-stride loop over the
// output). A root that is better served otherwise gets its own strategy: a large
// reduce runs as a workgroup tree, a large f32 dot as a register-blocked GEMM (a
// dot of at most 4 rows as the GEMV), a convolution with long sums per element as
// split-K partial sums and their sum, scatter as a copy followed by the updates,
// sort as a sequence of sorting passes.
func Lower(c *hlo.Computation, t Target) (*Program, error) {
	if c == nil || c.Root == nil {
		return nil, errors.New("codegen: computation has no root")
	}
	l, err := newLowering(c, t)
	if err != nil {
		return nil, fmt.Errorf("codegen: %s: %w", c.Name, err)
	}
	if err := l.lower(); err != nil {
		return nil, fmt.Errorf("codegen: %s: %w", c.Name, err)
	}
	return l.p, nil
}

// argBytes is the size of a program argument.
func (p *Program) argBytes(a Arg) int64 {
	switch {
	case a.Kind == ArgInput && a.Index < len(p.Inputs):
		return p.Inputs[a.Index].ByteSize()
	case a.Kind == ArgOutput && a.Index < len(p.Outputs):
		return p.Outputs[a.Index].ByteSize()
	case a.Kind == ArgScratch && a.Index < len(p.Scratch):
		return p.Scratch[a.Index]
	}
	return 0
}

// lowering holds what every strategy needs.
type lowering struct {
	c    *hlo.Computation
	t    Target
	wide bool // 64-bit index arithmetic
	p    *Program
}

func newLowering(c *hlo.Computation, t Target) (*lowering, error) {
	l := &lowering{c: c, t: t, p: &Program{Name: c.Name, Inputs: c.ParamShapes()}}
	root := c.Root.Shape
	if root.IsTuple() {
		l.p.Outputs = root.Clone().Elems
	} else {
		l.p.Outputs = []hlo.Shape{root.Clone()}
	}
	if err := checkBuffers(l.p); err != nil {
		return nil, err
	}
	if err := checkTypes(c, t, map[*hlo.Computation]bool{}); err != nil {
		return nil, err
	}
	wide, err := indexWidth(c, t)
	if err != nil {
		return nil, err
	}
	l.wide = wide
	return l, nil
}

// checkBuffers checks that every input and output is an array. (A buffer larger
// than one binding is reached by address or split across bindings: Target.Path.)
func checkBuffers(p *Program) error {
	check := func(what string, i int, s hlo.Shape) error {
		if !s.IsArray() {
			return fmt.Errorf("%s %d has shape %v; kernels take and produce arrays (nested tuples are flattened by the runtime)", what, i, s)
		}
		return nil
	}
	for i, s := range p.Inputs {
		if err := check("input", i, s); err != nil {
			return err
		}
	}
	for i, s := range p.Outputs {
		if err := check("output", i, s); err != nil {
			return err
		}
	}
	return nil
}

// checkTypes refuses element types the target cannot compute or store, naming the
// first instruction that uses one.
func checkTypes(c *hlo.Computation, t Target, seen map[*hlo.Computation]bool) error {
	if seen[c] {
		return nil
	}
	seen[c] = true
	for _, in := range c.Instructions {
		if why := ComplexSupport(in); why != "" {
			return fmt.Errorf("%w: %s (%v) %s", hlo.ErrUnsupported, in.Name, in.Op, why)
		}
		for _, s := range append([]hlo.Shape{in.Shape}, in.Shape.Elems...) {
			if !s.IsArray() {
				continue
			}
			if why := missingFeature(s.DType, t); why != "" {
				return fmt.Errorf("%w: %s (%v) uses %v, which %s", hlo.ErrUnsupported, in.Name, in.Op, s.DType, why)
			}
		}
		why := f8Limit(in)
		if why == "" {
			why = nibbleLimit(in)
		}
		if why != "" {
			return fmt.Errorf("%w: %s (%v) %s", hlo.ErrUnsupported, in.Name, in.Op, why)
		}
		for _, callee := range in.Called {
			if err := checkTypes(callee, t, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// f8Limit says why an instruction that makes or reads low-precision float values
// cannot be lowered yet, or "": they are lowered in elementwise and data-movement
// kernels only.
func f8Limit(in *hlo.Instruction) string {
	uses := isF8(in.Shape.DType)
	for _, op := range in.Operands {
		uses = uses || isF8(op.Shape.DType)
	}
	if !uses {
		return ""
	}
	switch in.Info().Kind {
	case hlo.KindLeaf, hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise, hlo.KindMovement, hlo.KindTuple:
		if in.Op != hlo.OpScatter {
			return ""
		}
	}
	return "uses a low-precision float; code generation handles those in elementwise and data-movement ops only"
}

// missingFeature says which target feature a dtype needs and lacks, or "".
func missingFeature(dt hlo.DType, t Target) string {
	switch {
	case dt.IsLowPrecision() && !isF8(dt) && !isNibble(dt): // none left: a new type
		return "is a low-precision type, which code generation does not handle yet"
	case (isF8(dt) || isNibble(dt)) && !(t.Int8 && t.StorageBuffer8Bit):
		return "is stored as 8-bit integers and needs shaderInt8 and storageBuffer8BitAccess, which the target lacks"
	case dt == hlo.F64 && !t.Float64:
		return "needs 64-bit floats (shaderFloat64), which the target lacks"
	case dt == hlo.C128 && !(t.Float64 && t.Int64):
		// f64 parts, and the f64 math's work on their encodings (log, sqrt's
		// sign tests, trig's reduction) in 64-bit integers.
		return "has f64 parts and needs 64-bit floats and integers (shaderFloat64, shaderInt64), which the target lacks"
	case (dt == hlo.S64 || dt == hlo.U64) && !t.Int64:
		return "needs 64-bit integers (shaderInt64), which the target lacks"
	case dt.Size() == 1 && !(t.Int8 && t.StorageBuffer8Bit):
		return "is stored as 8-bit integers and needs shaderInt8 and storageBuffer8BitAccess, which the target lacks"
	case dt.Size() == 2 && !(t.Int16 && t.StorageBuffer16Bit):
		return "is stored as 16-bit integers and needs shaderInt16 and storageBuffer16BitAccess, which the target lacks"
	}
	return ""
}

// indexWidth chooses 32-bit index arithmetic when every extent in the kernel is
// below 2^31 elements, else 64-bit where the target has it.
func indexWidth(c *hlo.Computation, t Target) (bool, error) {
	const limit = int64(1) << 31
	for _, in := range c.Instructions {
		n := extent(in)
		if n < limit {
			continue
		}
		if !t.Int64 {
			return false, fmt.Errorf("%s (%v %v) spans %d elements, which needs 64-bit index arithmetic (shaderInt64), which the target lacks",
				in.Name, in.Op, in.Shape, n)
		}
		return true, nil
	}
	return false, nil
}

// extent is the largest element count or index an instruction's kernel code can
// form: its elements, its operands' elements and padded window extents.
func extent(in *hlo.Instruction) int64 {
	n := int64(0)
	grow := func(s hlo.Shape) {
		if s.IsTuple() {
			for _, e := range s.Elems {
				n = max(n, e.NumElements())
			}
			return
		}
		n = max(n, s.NumElements())
	}
	grow(in.Shape)
	for _, x := range in.Operands {
		grow(x.Shape)
	}
	for _, w := range in.Attrs.Window {
		n = max(n, w.PadLow+w.PadHigh+w.Size*w.WindowDilation*w.Stride)
	}
	return n
}

// strategy is how a kernel computation is lowered, chosen by its root.
type strategy int

const (
	byElements strategy = iota // one grid-stride kernel over the output
	byScatter
	bySort
	byDynamicUpdateSlice
	byTreeReduce
	byGEMM
	byGEMV       // a dot of a few rows: all rows × a few columns per invocation
	byConvGEMM   // a float convolution as an implicit GEMM
	byDepthwise  // a float depthwise convolution, four features per invocation
	bySplitConv  // a long convolution in two passes (partial sums, then their sum)
	byUserKernel // a custom-call of a kernel target: the user's SPIR-V (user_kernel.go)
	byRows       // whole rows per invocation: row reductions once, then the row's outputs
	byFFT        // Stockham radix-2 passes, one dispatch each (fft.go)
)

// strategy picks the root's strategy; Lower and Facts both follow it.
func (l *lowering) strategy() strategy {
	root := l.c.Root
	if _, ok := hlo.KernelTarget(root); ok {
		return byUserKernel
	}
	switch {
	case root.Op == hlo.OpScatter:
		return byScatter
	case root.Op == hlo.OpSort:
		return bySort
	case root.Op == hlo.OpFft:
		return byFFT
	case root.Op == hlo.OpDynamicUpdateSlice && operandInPlace(l.c, 1) != nil:
		return byDynamicUpdateSlice
	case useTreeReduce(root, l.t):
		return byTreeReduce
	case useGEMV(gemmDot(l.c), l.t):
		return byGEMV
	case useGEMM(gemmDot(l.c), l.t):
		return byGEMM
	case useDepthwise(gemmConv(l.c), l.t):
		return byDepthwise
	case useConvGEMM(gemmConv(l.c), l.t):
		return byConvGEMM
	case useSplitConv(root, l.t):
		return bySplitConv
	}
	if _, ok := planRows(l.c); ok {
		return byRows
	}
	return byElements
}

// lower emits the program's dispatches by the root's strategy.
func (l *lowering) lower() error {
	switch l.strategy() {
	case byScatter:
		return l.lowerScatter()
	case bySort:
		return l.lowerSort()
	case byFFT:
		return l.lowerFFT()
	case byDynamicUpdateSlice:
		return l.lowerDynamicUpdateSlice()
	case byTreeReduce:
		return l.lowerTreeReduce()
	case byGEMM:
		return l.lowerGEMM()
	case byGEMV:
		return l.lowerGEMV()
	case byConvGEMM:
		return l.lowerConvGEMM()
	case byDepthwise:
		return l.lowerDepthwise()
	case bySplitConv:
		return l.lowerSplitConv()
	case byUserKernel:
		return l.lowerUserKernel()
	case byRows:
		rp, _ := planRows(l.c)
		return l.lowerRows(rp)
	}
	return l.lowerElemental()
}

// newKernel starts a kernel of this program with every input bound (bindings
// 0..len(Inputs)-1) and the given output bindings after them.
func (l *lowering) newKernel(suffix string, local uint32) *kernel {
	name := l.c.Name
	if suffix != "" {
		name += "_" + suffix
	}
	k := newKernel(l.t, name, local, l.wide)
	k.argBytes = l.p.argBytes
	for i, s := range l.p.Inputs {
		k.bind(Arg{Kind: ArgInput, Index: i}, s.DType, spirv.ReadOnly)
	}
	return k
}

// bindOutputs binds every program output after the inputs and returns the buffers.
func (l *lowering) bindOutputs(k *kernel) []spirv.Buffer {
	bufs := make([]spirv.Buffer, len(l.p.Outputs))
	for i, s := range l.p.Outputs {
		bufs[i] = k.bind(Arg{Kind: ArgOutput, Index: i}, s.DType, 0)
	}
	return bufs
}

// kernelGen is the elemental emitter of the kernel computation: parameters are
// loads from the input bindings.
func (l *lowering) kernelGen(k *kernel) *gen {
	var g *gen
	g = newGen(k, func(p *hlo.Instruction, idx []spirv.ID) spirv.ID {
		n := int(p.Attrs.ParameterNumber)
		if n < 0 || n >= len(l.p.Inputs) {
			k.failf("%s: parameter number %d of %d", p.Name, n, len(l.p.Inputs))
			return 0
		}
		lin := k.linearize(idx, p.Shape.Dims)
		inPlace := l.writtenInPlace(n)
		if v, ok := k.vecLoad(g, n, lin, p.Shape.DType, inPlace); ok {
			return v
		}
		if !inPlace { // a texel view is read-only
			if t, ok := k.scalarTexels(n, p.Shape.DType); ok {
				return k.fetchElem(t, lin)
			}
		}
		return k.load(k.bufs[n], lin, p.Shape.DType)
	})
	g.prepareConstants(l.c)
	// Rank-0 inputs are read once, before any loop: every element would read the
	// same value, and the compiler cannot hoist the load past the output stores
	// (the bindings may alias).
	for _, p := range l.c.Params {
		if p.Shape.IsScalar() {
			g.emit(p, scalarIndex)
		}
	}
	return g
}

// writtenInPlace reports input n among the program's InPlace inputs (those an
// output may overwrite): such an input is read through its storage buffer only,
// as a texel view of it would be read-only.
func (l *lowering) writtenInPlace(n int) bool { return n < len(l.p.InPlace) && l.p.InPlace[n] }

// lowerElemental emits one kernel in which each invocation computes whole output
// elements (every output of a multi-output root at the same index) in a
// grid-stride loop.
func (l *lowering) lowerElemental() error {
	dims := l.p.Outputs[0].Dims
	if err := l.checkOutputsShareDims(); err != nil {
		return err
	}
	n := l.p.Outputs[0].NumElements()
	if n == 0 {
		return nil // nothing to compute
	}
	k := l.newKernel("", defaultLocal)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	l.p.InPlace = inPlaceInputs(l.c, -1)
	if group := packedGroup(l.c); group > 1 {
		return l.add(k, l.elementalGroups(k, g, outs, dims, n, group))
	}
	if vectorizable(l.c, dims) {
		return l.add(k, l.elementalVec4(k, g, outs, dims))
	}
	groups := k.gridStride(n, func(i spirv.ID) {
		g.scoped(func() {
			vals := g.emitN(l.c.Root, k.delinearize(i, dims))
			for j, v := range vals {
				k.store(outs[j], i, v, l.p.Outputs[j].DType)
			}
		})
	})
	return l.add(k, groups)
}

// elementalGroups is the elemental loop for kernels with packed values: each
// invocation produces the group elements group·j … group·j+group-1, so that it
// writes whole bytes of the packed outputs (elements past the end are computed at
// the group's first index and not stored).
func (l *lowering) elementalGroups(k *kernel, g *gen, outs []spirv.Buffer, dims []int64, n, group int64) [3]uint32 {
	return k.gridStride((n+group-1)/group, func(j spirv.ID) {
		f := k.f
		base := f.IMul(j, k.ic(group))
		vals, has := make([][]spirv.ID, group), make([]spirv.ID, group)
		for e := range group {
			at := f.IAdd(base, k.ic(e))
			has[e] = f.Less(at, k.ic(n))
			g.scoped(func() { vals[e] = g.emitN(l.c.Root, k.delinearize(f.Select(has[e], at, base), dims)) })
		}
		for o, s := range l.p.Outputs {
			l.storeGroup(k, outs[o], s.DType, j, base, vals, has, o)
		}
	})
}

// storeGroup writes output o's elements of one group: whole bytes of a packed
// output, else element by element (those past the end skipped).
func (l *lowering) storeGroup(k *kernel, out spirv.Buffer, dt hlo.DType, j, base spirv.ID, vals [][]spirv.ID, has []spirv.ID, o int) {
	f := k.f
	group := int64(len(vals))
	if !isPacked(dt) {
		for e := range group {
			f.If(has[e], func() { k.store(out, f.IAdd(base, k.ic(e)), vals[e][o], dt) }, nil)
		}
		return
	}
	per := perByte(dt)
	for b := int64(0); b < group/per; b++ {
		byteVals := make([]spirv.ID, per)
		for e := range per {
			byteVals[e] = vals[b*per+e][o]
		}
		k.storePacked(out, f.IAdd(f.IMul(j, k.ic(group/per)), k.ic(b)), byteVals, has[b*per:(b+1)*per], dt)
	}
}

// checkOutputsShareDims: the elemental kernel writes every output at one index.
func (l *lowering) checkOutputsShareDims() error {
	for _, s := range l.p.Outputs[1:] {
		if !s.SameDims(l.p.Outputs[0]) {
			return fmt.Errorf("multi-output root %v: the outputs must share dimensions", l.c.Root.Shape)
		}
	}
	return nil
}

// add assembles a kernel and appends its dispatch.
func (l *lowering) add(k *kernel, groups [3]uint32) error {
	d, err := k.finish(groups)
	if err != nil {
		return err
	}
	l.p.Dispatches = append(l.p.Dispatches, d)
	return nil
}
