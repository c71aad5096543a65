package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// SiblingFusion is XLA's multi-output sibling fusion: two kernels that read the
// same value and do not depend on each other become one kernel writing both
// kernels' outputs, so that the shared value is read once (an invocation loads it
// once for every output at that index) and one dispatch is saved. A backward pass
// reads each activation and cotangent from several gradient kernels; after
// producer-consumer fusion (Fusion) those readers are separate kernels.
//
// The merged kernel is a fusion whose computation returns the tuple of both
// kernels' outputs; each old instruction becomes a get-tuple-element of it, so its
// users are unchanged. Kernels that merge, all outputs of both having the same
// dims (the elemental kernel writes all its outputs at one index):
//   - loop kernels: elementwise ops and kLoop fusions of elementwise and
//     data-movement ops, with one output or a tuple of them (fusion_multi.go);
//   - a row kernel (fusion_rows.go) with a loop kernel or a row kernel of the same
//     rows: code generation sweeps every output of a row in one pass, so the
//     merged kernel must stay within maxRowWork;
//   - two reductions of inputs of the same dims over the same dimensions, as one
//     reduction of several values whose reducer computes both (mergedReduce), while
//     each output folds fewer than maxSiblingReduceExtent elements.
//
// Rules:
//   - the shared value is not a constant or iota (which kernels hold or compute
//     themselves); a shared scalar counts: the merge still saves a dispatch;
//   - no cycle: neither kernel reads the other, and every operand of both comes
//     before the first reader of either in the computation's order, so the merged
//     kernel has a place there — which also means neither reaches the other
//     through other instructions (such a path would put an operand of the later
//     kernel after a reader of the earlier). It takes that place: as late as the
//     readers allow, without moving anything else;
//   - bounded size: the merged kernel has at most Config.MaxFusedInstructions
//     instructions, maxFusionOutputs outputs, Config.MaxFusionParams parameters and
//     no more bindings (parameters and outputs) than a single-output kernel at that
//     bound;
//   - nothing is duplicated: each kernel's body moves into the merged one once, and
//     a producer both kernels copied is computed once (mergeEqualInstructions);
//   - memory: the merged kernel keeps both kernels' operands and outputs live at
//     once; if the memory model (heapsim, with Config.Memory: what schedule and
//     remat use) says the module's peak grows by more than 1/maxSiblingPeakGrowth,
//     the pass leaves the module as it was.
func SiblingFusion(m *hlo.Module, cfg Config) (bool, error) {
	orig := m.Clone()
	s := newSiblingFuser(m, cfg)
	changed := false
	for _, c := range sequentialComputations(m) {
		for s.fuseOnePair(c) {
			changed = true
		}
	}
	if !changed {
		return false, nil // no simulation: most modules have nothing to merge
	}
	if peak, measured := modelPeak(orig, cfg.Memory); measured {
		if after, ok := modelPeak(m, cfg.Memory); !ok || after > peak+peak/maxSiblingPeakGrowth {
			*m = *orig
			return false, nil
		}
	}
	return true, nil
}

// maxSiblingPeakGrowth: the module's modelled peak may grow by at most
// 1/maxSiblingPeakGrowth of itself through sibling fusion.
const maxSiblingPeakGrowth = 16

// siblingFuser holds the state of one SiblingFusion run.
type siblingFuser struct {
	m         *hlo.Module
	maxParams int
	// bindings is how many bindings a value of a shape takes (split tensors take
	// several; the fuser's rule).
	bindings  func(hlo.Shape) int
	maxInstrs int
	names     *nameSet
	// callers counts the fusion instructions calling each computation: a kernel
	// whose computation another fusion also calls cannot give its body away.
	callers map[*hlo.Computation]int
	// rejected holds pairs found not to qualify: merging only adds paths and grows
	// kernels, so a pair that fails once fails for the rest of the run.
	rejected map[[2]*hlo.Instruction]bool
}

func newSiblingFuser(m *hlo.Module, cfg Config) *siblingFuser {
	f := newFuser(m, cfg)
	s := &siblingFuser{m: m, maxParams: f.maxParams, bindings: f.shapeBindings, maxInstrs: f.maxInstrs, names: f.names,
		callers: map[*hlo.Computation]int{}, rejected: map[[2]*hlo.Instruction]bool{}}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op == hlo.OpFusion {
				s.callers[in.Called[0]]++
			}
		}
	}
	return s
}

// loopKernel is a kernel of the computation that may take part in a merge.
type loopKernel struct {
	in *hlo.Instruction
	// outputs are the kernel's output shapes; gtes, for a tuple-shaped kernel, the
	// get-tuple-elements that read them (its only users).
	outputs []hlo.Shape
	gtes    []*hlo.Instruction
	// reduce is the kernel's root reduction (in its computation, or the kernel
	// itself if unfused), nil for an elementwise kernel.
	reduce *hlo.Instruction
	// rows, for a row kernel (fusion_rows.go), is its reductions' result dims,
	// which lead its outputs' dims; rowWork the elements their rows sweep.
	rows    []int64
	rowWork int64
	// size is the kernel's instructions besides parameters (and its root tuple).
	size int
	// first is the position of the first instruction that reads its outputs.
	first int
}

// fuseOnePair merges the first pair of sibling loop kernels of c that qualifies,
// and reports whether it found one.
func (s *siblingFuser) fuseOnePair(c *hlo.Computation) bool {
	c.Renumber()
	users := c.Users()
	live := liveInstructions(c) // a dead kernel (DCE's) merged with a live one would be computed for nothing
	for _, x := range c.Instructions {
		if !x.Shape.IsArray() || x.Op == hlo.OpConstant || x.Op == hlo.OpIota {
			continue // what a kernel holds or computes itself is not shared
		}
		var sibs []loopKernel
		for _, u := range users[x.ID] {
			if !live[u] {
				continue
			}
			if k, ok := s.loopKernelOf(c, u, users); ok {
				sibs = append(sibs, k)
			}
		}
		slices.SortFunc(sibs, func(a, b loopKernel) int { return a.in.ID - b.in.ID })
		for i := range sibs {
			for j := i + 1; j < len(sibs); j++ {
				if s.canMerge(sibs[i], sibs[j]) {
					s.merge(c, sibs[i], sibs[j])
					return true
				}
			}
		}
	}
	return false
}

// loopKernelOf describes in as a loop kernel, if it is one.
func (s *siblingFuser) loopKernelOf(c *hlo.Computation, in *hlo.Instruction, users [][]*hlo.Instruction) (loopKernel, bool) {
	k := loopKernel{in: in, first: len(c.Instructions)}
	if in == c.Root || !in.SideEffectFree() {
		return k, false
	}
	switch {
	case in.Op == hlo.OpFusion:
		fc := in.Called[0]
		if s.callers[fc] != 1 || fc.Root.Op == hlo.OpParameter {
			return k, false
		}
		if fc.Root.Op == hlo.OpReduce {
			k.reduce = fc.Root
		}
		for _, x := range fc.Instructions {
			if x.Op != hlo.OpParameter && !(x == fc.Root && x.Op == hlo.OpTuple) {
				if x != k.reduce && !isLoopKernelOp(x) && !k.addRowReduction(x) {
					return k, false
				}
				k.size++
			}
		}
	case isElementwiseOp(in) && in.Shape.IsArray():
		k.size = 1
	case in.Op == hlo.OpReduce:
		k.reduce, k.size = in, 1
	default:
		return k, false
	}
	readers := users[in.ID]
	if in.Shape.IsTuple() {
		k.gtes = readers
		readers = nil
		for _, g := range k.gtes {
			if g.Op != hlo.OpGetTupleElement || g == c.Root {
				return k, false
			}
			readers = append(readers, users[g.ID]...)
		}
		k.outputs = in.Shape.Elems
	} else {
		k.outputs = []hlo.Shape{in.Shape}
	}
	for _, u := range readers {
		k.first = min(k.first, u.ID)
	}
	for _, o := range k.outputs {
		if !o.IsArray() || !o.SameDims(k.outputs[0]) {
			return k, false
		}
	}
	if k.rows != nil && (k.reduce != nil || !slices.Equal(k.outputs[0].Dims[:min(len(k.rows), k.outputs[0].Rank())], k.rows)) {
		return k, false // a reduction read per element, not a row kernel
	}
	return k, k.reduce == nil || reducedExtent(k.reduce) < maxSiblingReduceExtent
}

// addRowReduction notes x, inside a fused kernel, as one of a row kernel's
// reductions, if it is one with the same rows as the others.
func (k *loopKernel) addRowReduction(x *hlo.Instruction) bool {
	rows, ok := hlo.RowReduceDims(x)
	if !ok || (k.rows != nil && !slices.Equal(rows, k.rows)) {
		return false
	}
	k.rows = rows
	k.rowWork += rowLength(x.Operands[0].Shape, rows)
	return true
}

// maxSiblingReduceExtent bounds the elements folded into each output of a merged
// reduction: from codegen's tree threshold on, a reduction of one value takes the
// workgroup tree with subgroup arithmetic, which a reduction of several values
// (the merged one) does not get.
const maxSiblingReduceExtent = 1024

// reducedExtent is the number of elements folded into each output of a reduce.
func reducedExtent(r *hlo.Instruction) int64 {
	n := int64(1)
	for _, d := range r.Attrs.Dimensions {
		n *= r.Operands[0].Shape.Dims[d]
	}
	return n
}

// isLoopKernelOp: x may be part of a kernel lowered element by element.
func isLoopKernelOp(x *hlo.Instruction) bool {
	if !x.SideEffectFree() || !x.Shape.IsArray() {
		return false
	}
	switch x.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return true
	case hlo.KindMovement:
		return x.Op != hlo.OpScatter && x.Op != hlo.OpDynamicUpdateSlice
	}
	return x.Op == hlo.OpConstant || x.Op == hlo.OpIota
}

// canMerge says whether the loop kernels a and b (a first) may become one, by the
// rules above.
func (s *siblingFuser) canMerge(a, b loopKernel) bool {
	key := [2]*hlo.Instruction{a.in, b.in}
	if s.rejected[key] {
		return false
	}
	ok := a.outputs[0].SameDims(b.outputs[0]) && sameLoop(a, b) && a.size+b.size <= s.maxInstrs &&
		len(a.outputs)+len(b.outputs) <= maxFusionOutputs && s.fitsBindings(a, b) && hasPlace(a, b)
	if !ok {
		s.rejected[key] = true
	}
	return ok
}

// sameLoop: the kernels (of the same output dims) loop alike: both reduce
// inputs of the same dims over the same dimensions (one loop then folds both),
// or neither is a reduction and, where either is a row kernel, the merged one
// is a row kernel within the row work bound (its outputs are swept once).
func sameLoop(a, b loopKernel) bool {
	if a.reduce != nil || b.reduce != nil {
		return a.reduce != nil && b.reduce != nil && a.reduce.Operands[0].Shape.SameDims(b.reduce.Operands[0].Shape) &&
			slices.Equal(a.reduce.Attrs.Dimensions, b.reduce.Attrs.Dimensions)
	}
	rows := a.rows
	if rows == nil {
		rows = b.rows
	} else if b.rows != nil && !slices.Equal(a.rows, b.rows) {
		return false
	}
	return rows == nil || rowLength(a.outputs[0], rows)+a.rowWork+b.rowWork <= maxRowWork
}

// fitsBindings: the merged kernel's parameters (distinct operands) and bindings
// stay within the bounds, counting a split tensor's bindings as the fuser does.
func (s *siblingFuser) fitsBindings(a, b loopKernel) bool {
	params := 0
	for _, x := range distinct(append(slices.Clone(a.in.Operands), b.in.Operands...)) {
		params += s.bindings(x.Shape)
	}
	outputs := 0
	for _, o := range slices.Concat(a.outputs, b.outputs) {
		outputs += s.bindings(o)
	}
	return params <= s.maxParams && params+outputs <= s.maxParams+1
}

// hasPlace: every operand of a and b comes before every reader of either, and
// neither reads the other (so no path joins them).
func hasPlace(a, b loopKernel) bool {
	if slices.Contains(b.in.Operands, a.in) || slices.ContainsFunc(b.in.Operands, func(x *hlo.Instruction) bool {
		return slices.Contains(a.gtes, x)
	}) {
		return false
	}
	last := -1
	for _, x := range append(slices.Clone(a.in.Operands), b.in.Operands...) {
		last = max(last, x.ID)
	}
	return last < min(a.first, b.first)
}

// merge makes a and b one kernel placed before the first reader of either.
func (s *siblingFuser) merge(c *hlo.Computation, a, b loopKernel) {
	fc := &hlo.Computation{Name: s.names.fresh("fused_siblings_" + a.in.Name)}
	fusion := &hlo.Instruction{Name: s.names.fresh("siblings_" + a.in.Name), Op: hlo.OpFusion,
		Called: []*hlo.Computation{fc}}
	fusion.Attrs.FusionKind = hlo.FusionLoop
	params := map[*hlo.Instruction]*hlo.Instruction{}
	for _, x := range c.Instructions { // parameters in the outer order
		if slices.Contains(a.in.Operands, x) || slices.Contains(b.in.Operands, x) {
			p := &hlo.Instruction{Name: s.names.fresh("param_" + x.Name), Op: hlo.OpParameter,
				Shape: x.Shape.Clone(), Attrs: hlo.Attributes{ParameterNumber: int64(len(fc.Params))}}
			params[x] = p
			fc.Params = append(fc.Params, p)
			fusion.Operands = append(fusion.Operands, x)
		}
	}
	bodyA, rootsA := s.moveBody(a.in, params)
	bodyB, rootsB := s.moveBody(b.in, params)
	fusion.Shape = hlo.MakeTuple(slices.Concat(a.outputs, b.outputs)...)
	body := slices.Concat(bodyA, bodyB)
	if a.reduce != nil {
		ra, rb := rootsA[0], rootsB[0]
		fc.Root = s.mergedReduce(ra, rb, fusion.Shape.Clone())
		fusion.Attrs.FusionKind = hlo.FusionInput
		body = slices.DeleteFunc(body, func(x *hlo.Instruction) bool { return x == ra || x == rb })
	} else {
		fc.Root = &hlo.Instruction{Name: s.names.fresh("tuple"), Op: hlo.OpTuple, Shape: fusion.Shape.Clone(),
			Operands: slices.Concat(rootsA, rootsB)}
	}
	fc.Instructions = slices.Concat(fc.Params, body, []*hlo.Instruction{fc.Root})
	mergeEqualInstructions(fc) // a producer both kernels copied is computed once
	if !unwrapLoneOp(fusion, fc) {
		fc.Renumber()
		s.m.Computations = slices.Insert(s.m.Computations, slices.Index(s.m.Computations, c), fc)
		s.callers[fc] = 1
	}
	placed := append([]*hlo.Instruction{fusion}, s.readOutputs(a, fusion, 0)...)
	placed = append(placed, s.readOutputs(b, fusion, len(a.outputs))...)
	at := c.Instructions[min(a.first, b.first)]
	var gone []*hlo.Instruction // tuple-shaped kernels, read now through the fusion
	for _, k := range []loopKernel{a, b} {
		if k.gtes != nil {
			gone = append(gone, k.in)
		}
	}
	kept := slices.DeleteFunc(slices.Clone(c.Instructions), func(x *hlo.Instruction) bool {
		return slices.Contains(placed, x) || slices.Contains(gone, x)
	})
	i := slices.Index(kept, at)
	c.Instructions = slices.Insert(kept, i, placed...)
	c.Renumber()
}

// unwrapLoneOp turns fusion, whose computation fc is one instruction over its
// parameters (two unfused sibling reductions merged into one variadic reduce),
// into that instruction over fusion's operands: a fusion of one op fuses nothing.
func unwrapLoneOp(fusion *hlo.Instruction, fc *hlo.Computation) bool {
	if len(fc.Instructions) != len(fc.Params)+1 {
		return false
	}
	root := fc.Root
	operands := make([]*hlo.Instruction, len(root.Operands))
	for i, o := range root.Operands {
		operands[i] = fusion.Operands[slices.Index(fc.Params, o)]
	}
	fusion.Op, fusion.Operands, fusion.Attrs, fusion.Called = root.Op, operands, root.Attrs, root.Called
	return true
}

// mergedReduce is one reduction folding the inputs of both ra and rb (each
// reducing one value or several) over their common dimensions: its operands are
// all their inputs, then all their init values, and its reducer computes both
// reducers side by side.
func (s *siblingFuser) mergedReduce(ra, rb *hlo.Instruction, shape hlo.Shape) *hlo.Instruction {
	na, nb := len(ra.Operands)/2, len(rb.Operands)/2
	reducer := s.combinedReducer(ra.Called[0], na, rb.Called[0], nb)
	r := &hlo.Instruction{Name: s.names.fresh(ra.Name), Op: hlo.OpReduce, Shape: shape,
		Operands: slices.Concat(ra.Operands[:na], rb.Operands[:nb], ra.Operands[na:], rb.Operands[nb:]),
		Attrs:    ra.Attrs.Clone(), Called: []*hlo.Computation{reducer}}
	s.m.Computations = slices.Insert(s.m.Computations, 0, reducer)
	return r
}

// combinedReducer computes reducer r1 (of n1 values) and r2 (of n2) side by side:
// (acc1…, acc2…, x1…, x2…) → (r1(acc1…, x1…)…, r2(acc2…, x2…)…), as a
// reduction of n1+n2 values needs.
func (s *siblingFuser) combinedReducer(r1 *hlo.Computation, n1 int, r2 *hlo.Computation, n2 int) *hlo.Computation {
	c1, c2 := hlo.CloneComputation(r1, s.names.fresh), hlo.CloneComputation(r2, s.names.fresh)
	out := &hlo.Computation{Name: s.names.fresh("siblings_" + r1.Name)}
	out.Params = slices.Concat(c1.Params[:n1], c2.Params[:n2], c1.Params[n1:], c2.Params[n2:])
	for i, p := range out.Params {
		p.Attrs.ParameterNumber = int64(i)
	}
	var roots []*hlo.Instruction
	out.Instructions = slices.Clone(out.Params)
	for _, c := range []*hlo.Computation{c1, c2} {
		for _, x := range c.Instructions {
			if x.Op != hlo.OpParameter && !(x == c.Root && x.Op == hlo.OpTuple) {
				out.Instructions = append(out.Instructions, x)
			}
		}
		roots = append(roots, c.Outputs()...)
	}
	shapes := make([]hlo.Shape, len(roots))
	for i, r := range roots {
		shapes[i] = r.Shape.Clone()
	}
	out.Root = &hlo.Instruction{Name: s.names.fresh("tuple"), Op: hlo.OpTuple, Shape: hlo.MakeTuple(shapes...), Operands: roots}
	out.Instructions = append(out.Instructions, out.Root)
	out.Renumber()
	return out
}

// moveBody moves kernel in's computation (or a copy of in itself, if unfused) into
// a merged kernel whose parameter for each outer value params gives, returning
// the body and the values it outputs. A fused computation moved out is removed
// from the module: its fusion becomes a get-tuple-element (readOutputs).
func (s *siblingFuser) moveBody(in *hlo.Instruction, params map[*hlo.Instruction]*hlo.Instruction) (body, roots []*hlo.Instruction) {
	if in.Op != hlo.OpFusion {
		clone := &hlo.Instruction{Name: s.names.fresh(in.Name), Op: in.Op, Shape: in.Shape.Clone(),
			Attrs: in.Attrs.Clone(), Called: in.Called}
		for _, x := range in.Operands {
			clone.Operands = append(clone.Operands, params[x])
		}
		return []*hlo.Instruction{clone}, []*hlo.Instruction{clone}
	}
	fc := in.Called[0]
	for _, x := range fc.Instructions {
		if x.Op == hlo.OpParameter {
			continue
		}
		for j, op := range x.Operands {
			if op.Op == hlo.OpParameter {
				x.Operands[j] = params[in.Operands[op.Attrs.ParameterNumber]]
			}
		}
		if x != fc.Root || x.Op != hlo.OpTuple {
			body = append(body, x)
		}
	}
	roots = fc.Outputs()
	s.m.Computations = slices.DeleteFunc(s.m.Computations, func(x *hlo.Computation) bool { return x == fc })
	return body, roots
}

// readOutputs makes the readers of kernel k's outputs read them from the merged
// fusion, whose outputs from offset on are k's, and returns the
// get-tuple-elements to place right after the fusion: k itself turned into one
// in place (keeping its name and users), or its own get-tuple-elements.
func (s *siblingFuser) readOutputs(k loopKernel, fusion *hlo.Instruction, offset int) []*hlo.Instruction {
	if k.gtes == nil {
		*k.in = hlo.Instruction{Name: k.in.Name, Op: hlo.OpGetTupleElement, Shape: k.outputs[0].Clone(),
			Operands: []*hlo.Instruction{fusion}, ID: k.in.ID}
		k.in.Attrs.TupleIndex = int64(offset)
		return []*hlo.Instruction{k.in}
	}
	for _, g := range k.gtes {
		g.Operands[0] = fusion
		g.Attrs.TupleIndex += int64(offset)
	}
	return slices.Clone(k.gtes)
}
