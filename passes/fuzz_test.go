package passes

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/randgraph"
)

// FuzzPipeline builds a random valid module from the fuzz bytes, runs the pipeline
// on a copy with a random fusion bound (and sometimes passes switched off) and
// checks that the result verifies, that fusions are flat and follow the fusion
// rules, and that cpuref gives bit-identical results before and after: fusion only
// moves where an op is evaluated, and cpuref evaluates every op the same way inside
// a fused computation as outside it, so not even a NaN's payload may change.
//
// The input is decoded by internal/randgraph.FromBytes (the generator every
// fuzzer shares). `go test` runs the seeds; `go test -fuzz FuzzPipeline ./passes`
// explores.
func FuzzPipeline(f *testing.F) {
	for _, seed := range fuzzPipelineSeeds {
		f.Add(seed.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 160 {
			data = data[:160]
		}
		checkPipelineOn(t, data)
	})
}

// fuzzPipelineSeeds are the fuzz seeds; those marked fuses are hand-written graphs
// whose entry must shrink under fusion (TestFuzzPipelineSeedsFuse).
var fuzzPipelineSeeds = []struct {
	name  string
	data  []byte
	fuses bool
}{
	// Two f32[3,4] parameters: negate, add, exp, multiply, abs, subtract, each on
	// the latest value: one fusion.
	{"elementwise chain", []byte{2, 3, 6, 0, 1, 0, 0, 0, 0, 0,
		0, 1, 0, 2, 1, 0, 0, 0, 0, 1, 4, 2, 1, 1, 0, 2, 0, 1, 1, 2, 1, 0, 0, 1}, true},
	// A negate with three users (abs, multiply, clamp), their combination used by
	// an exp and a divide, and the exp (expensive) used by a negate, the divide and
	// a tuple root that also holds a parameter.
	{"fan-out", []byte{3, 3, 4, 0, 1, 3, 0, 8, 0, 0,
		20, 1, 0, 0, 1, 0, 1, 2, 0, 0, 2, 16, 5, 6, 0,
		2, 1, 3, 0, 0, 2, 1, 4, 0, 1,
		20, 1, 0, 4, 0, 2, 7, 0, 5, 0, 0, 2, 1, 9, 0, 2}, true},
	// Softmax: exp, a row sum (kInput), its broadcast and the division.
	{"softmax", []byte{3, 4, 1, 0, 0, 0, 0, 0, 0,
		0, 1, 4, 13, 1, 1, 1, 0, 6, 1, 4, 1, 2, 1, 1, 1, 5}, true},
	// Transpose, add, strided slice, pad with interior padding, reverse,
	// concatenate, reshape, multiply: one fusion.
	{"movement", []byte{2, 3, 4, 0, 1, 0, 0, 0, 0, 2,
		7, 1, 2, 1, 0, 0, 0, 9, 1, 1, 1, 0, 0, 3, 1, 11, 1, 2, 1, 1, 1, 2, 0, 0, 4,
		12, 1, 3, 10, 1, 1, 0, 1, 8, 1, 2, 2, 1, 0, 0, 0, 2}, true},
	// f32 and s32: convert, compare and select, a dot whose operand stays
	// materialised, broadcast, maximum, convert, and; the select is also a root
	// element.
	{"types and dot", []byte{2, 3, 4, 0, 2, 2, 4, 0, 0, 24, 4,
		5, 2, 4, 1, 0, 0, 2, 0, 0, 14, 1, 4, 6, 1, 3, 1, 2, 1, 0, 0, 3, 5, 1, 2, 1, 1, 0, 7}, true},
	// A three-trip while loop whose body fuses, a max-reduction of its result
	// selecting between two branches, and an add.
	{"while and conditional", []byte{2, 4, 6, 0, 1, 0, 0, 0, 0, 0,
		21, 1, 0, 2, 2, 2, 1, 0, 0, 2, 0, 1, 1, 2, 1, 0, 0, 0, 0, 0,
		13, 1, 0, 0, 1,
		22, 3, 1, 1, 0, 4, 0, 1, 0, 1, 0, 2, 1, 0, 0, 4, 0, 0, 1, 4,
		2, 1, 0, 0, 0}, true},
	// Dynamic-slice at a computed start, dynamic-update-slice, a variadic
	// (sum, max) reduce of f32 and s32, and a broadcast of its second result.
	{"dynamic slices and variadic reduce", []byte{2, 3, 3, 0, 1, 2, 7, 0, 0, 24,
		17, 1, 1, 2, 0, 5, 1, 0, 0,
		18, 0, 0, 1, 2, 0, 1, 0, 1, 2, 0, 0, 6, 0, 3,
		19, 1, 1, 1, 1, 1, 6, 1, 3, 1, 2, 1, 1, 0, 0}, true},
	// A call of a two-argument computation, tanh, a small constant and a clamp,
	// with at most two fusion parameters.
	{"call and constants", []byte{1, 2, 0, 0, 0, 0, 0, 0, 0,
		22, 1, 0, 0, 1, 1, 0, 1, 0, 2, 1, 0, 0, 2,
		1, 1, 6, 15, 1, 0, 7, 0, 0, 16, 1, 2, 6, 0}, true},
	// Passes switched off.
	{"fusion off", []byte{3, 3, 0, 6, 1, 1, 0, 0, 0, 0, 1, 2, 1, 0, 0, 1, 3, 1, 0, 2}, false},
	{"dce off", []byte{3, 3, 0, 7, 1, 1, 0, 0, 0, 0, 1, 2, 1, 0, 0, 1, 3, 1, 0, 2}, false},
	{"both dce off", []byte{2, 2, 1, 9, 2, 2, 0, 1, 0, 0, 0, 1, 0, 2, 0, 1, 20, 1, 0, 3, 1, 0, 1, 0}, false},
}

// TestFuzzPipelineSeedsFuse checks that fusion happens on the hand-written seeds
// meant to fuse: their entry ends with fewer non-parameter instructions and at
// least one fusion.
func TestFuzzPipelineSeedsFuse(t *testing.T) {
	for _, seed := range fuzzPipelineSeeds {
		t.Run(seed.name, func(t *testing.T) {
			st := checkPipelineOn(t, seed.data)
			if !seed.fuses {
				return
			}
			if st.fusions == 0 || st.after >= st.before {
				t.Fatalf("entry went from %d to %d non-parameter instructions with %d fusions; want fewer, fused:\n%s",
					st.before, st.after, st.fusions, st.text)
			}
		})
	}
}

// pipelineStats summarises one checked run for the seed test.
type pipelineStats struct {
	// before and after count the entry's non-parameter instructions after the
	// pipeline without and with fusion.
	before, after int
	fusions       int // fusion instructions in the optimised module
	text          string
}

// fuzzModule decodes a module and the pipeline configuration its header names.
func fuzzModule(data []byte) (*hlo.Module, Config, error) {
	m, h, err := randgraph.FromBytes(data)
	// Small instruction bounds (derived, so that the corpus decodes as before) make
	// the random graphs split kernels too.
	return m, Config{MaxFusionParams: h.MaxFusionParams, MaxFusedInstructions: 3 * h.MaxFusionParams, Disabled: h.Disabled}, err
}

// checkPipelineOn builds the module the bytes describe and checks the pipeline on it.
func checkPipelineOn(t *testing.T, data []byte) pipelineStats {
	t.Helper()
	m, cfg, err := fuzzModule(data)
	if err != nil {
		t.Fatalf("generator built an invalid graph: %v", err)
	}
	h := fnv.New64a()
	h.Write(data)
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	var inputs []*hlo.Literal
	for _, p := range m.Entry.Params {
		inputs = append(inputs, randgraph.Input(rng, p.Shape))
	}
	return checkPipeline(t, m, cfg, inputs)
}

func checkPipeline(t *testing.T, m *hlo.Module, cfg Config, inputs []*hlo.Literal) pipelineStats {
	t.Helper()
	orig := hlo.Print(m)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nconfig: max fusion params %d, disabled %v\nmodule before:\n%s",
			fmt.Sprintf(format, args...), cfg.MaxFusionParams, cfg.Disabled, orig)
	}

	opt := m.Clone()
	if err := Run(opt, cfg); err != nil {
		fail("Run: %v", err)
	}
	after := hlo.Print(opt)
	if err := hlo.Verify(opt); err != nil {
		fail("the optimised module does not verify: %v\nafter:\n%s", err, after)
	}
	if got := hlo.Print(m); got != orig {
		fail("Run on a clone changed the original module; now:\n%s", got)
	}
	again := m.Clone()
	if err := Run(again, cfg); err != nil {
		fail("second Run: %v", err)
	}
	if got := hlo.Print(again); got != after {
		fail("the pipeline is not deterministic:\n%s\nthen:\n%s", after, got)
	}

	disabled := func(name string) bool { return slices.Contains(cfg.Disabled, name) }
	fusionOn := !disabled("fusion") || !disabled("sibling-fusion") // both make fusions
	if err := checkFusions(opt, cfg, fusionOn); err != nil {
		fail("%v\nafter:\n%s", err, after)
	}
	if !disabled("dce-after-fusion") || (!disabled("dce") && !fusionOn) {
		if err := checkNoDeadCode(opt); err != nil {
			fail("dead code after the pipeline: %v\nafter:\n%s", err, after)
		}
	}

	// The same pipeline without fusion: fusion never adds instructions to a
	// sequential computation, and never duplicates what is computed once (reduce,
	// dot, control flow, expensive ops), so their counts over the module match.
	ref := m.Clone()
	refCfg := cfg
	refCfg.Disabled = append(slices.Clone(cfg.Disabled), "fusion", "sibling-fusion")
	if err := Run(ref, refCfg); err != nil {
		fail("Run without fusion: %v", err)
	}
	st := pipelineStats{before: nonParams(ref.Entry), after: nonParams(opt.Entry), text: after}
	if st.after > st.before {
		fail("fusion grew the entry from %d to %d instructions\nafter:\n%s", st.before, st.after, after)
	}
	if got, want := onceOps(opt), onceOps(ref); got != want {
		fail("ops that must be computed once: %s after fusion, %s without\nafter:\n%s", got, want, after)
	}
	for _, c := range opt.Computations {
		for _, in := range c.Instructions {
			if in.Op == hlo.OpFusion {
				st.fusions++
			}
		}
	}

	want, err := cpuref.Eval(m, inputs...)
	if err != nil {
		fail("cpuref on the module before: %v", err)
	}
	got, err := cpuref.Eval(opt, inputs...)
	if err != nil {
		fail("cpuref on the optimised module: %v\nafter:\n%s", err, after)
	}
	if err := literalBitsEqual(got, want); err != nil {
		fail("results differ: %v\ninputs: %v\nafter:\n%s", err, inputs, after)
	}
	checkRemat(t, m, opt, cfg, inputs, want, fail)
	return st
}

// testModelPeak is the memory model's plan bytes for m (cfg.Memory's facts).
func testModelPeak(t *testing.T, m *hlo.Module, cfg Config) int64 {
	t.Helper()
	model, err := heapsim.Simulate(m, cfg.Memory)
	if err != nil {
		t.Fatalf("memory model: %v\n%s", err, hlo.Print(m))
	}
	return model.Stats.PeakBytes
}

// checkRemat runs the pipeline again under a memory budget of three quarters of
// the optimised entry's modelled peak: the result must verify, compute the same
// bits, and never model a higher peak than without the budget.
func checkRemat(t *testing.T, m, opt *hlo.Module, cfg Config, inputs []*hlo.Literal, want *hlo.Literal, fail func(string, ...any)) {
	t.Helper()
	peak := testModelPeak(t, opt, cfg)
	cfg.MemoryBudget = max(1, peak*3/4)
	rm := m.Clone()
	if err := Run(rm, cfg); err != nil {
		fail("Run with budget %d: %v", cfg.MemoryBudget, err)
	}
	text := hlo.Print(rm)
	if got := testModelPeak(t, rm, cfg); got > peak {
		fail("remat raised the modelled peak from %d to %d (budget %d)\nafter:\n%s", peak, got, cfg.MemoryBudget, text)
	}
	got, err := cpuref.Eval(rm, inputs...)
	if err != nil {
		fail("cpuref on the rematerialised module: %v\nafter:\n%s", err, text)
	}
	if err := literalBitsEqual(got, want); err != nil {
		fail("results differ after remat (budget %d): %v\nafter:\n%s", cfg.MemoryBudget, err, text)
	}
}

// checkFusions checks every fusion instruction: its computation is its own, flat,
// within the parameter bound, one parameter per distinct operand, of the right kind,
// and made of fusible producers under a consumer root.
func checkFusions(m *hlo.Module, cfg Config, fusionOn bool) error {
	callers := map[*hlo.Computation]int{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			for _, callee := range in.Called {
				callers[callee]++
			}
		}
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op != hlo.OpFusion {
				continue
			}
			if !fusionOn {
				return fmt.Errorf("fusion %s with the fusion pass off", in.Name)
			}
			if err := checkFusion(in, cfg, callers); err != nil {
				return fmt.Errorf("computation %s: fusion %s: %w", c.Name, in.Name, err)
			}
		}
	}
	return nil
}

func checkFusion(in *hlo.Instruction, cfg Config, callers map[*hlo.Computation]int) error {
	if len(in.Called) != 1 {
		return fmt.Errorf("calls %d computations", len(in.Called))
	}
	fc := in.Called[0]
	if callers[fc] != 1 {
		return fmt.Errorf("%s is called %d times", fc.Name, callers[fc])
	}
	if len(fc.Params) != len(in.Operands) {
		return fmt.Errorf("%d parameters for %d operands", len(fc.Params), len(in.Operands))
	}
	if len(fc.Params) > cfg.MaxFusionParams {
		return fmt.Errorf("%d parameters, over the bound %d", len(fc.Params), cfg.MaxFusionParams)
	}
	for i, x := range in.Operands {
		if slices.Index(in.Operands, x) != i {
			return fmt.Errorf("operand %s appears twice", x.Name)
		}
		if fc.Params[i].Attrs.ParameterNumber != int64(i) {
			return fmt.Errorf("parameter %d is numbered %d", i, fc.Params[i].Attrs.ParameterNumber)
		}
	}
	if want := fusionKind(fc); in.Attrs.FusionKind != want {
		return fmt.Errorf("kind %v, want %v", in.Attrs.FusionKind, want)
	}
	if fc.Root.Op == hlo.OpParameter || fc.Root.Op == hlo.OpDot {
		return fmt.Errorf("root %s is %v", fc.Root.Name, fc.Root.Op)
	}
	ops := 0
	for _, x := range fc.Instructions {
		switch x.Op {
		case hlo.OpParameter:
			continue
		case hlo.OpTuple:
			if err := checkMultiOutput(fc, x); err != nil {
				return err
			}
			continue
		case hlo.OpWhile, hlo.OpConditional, hlo.OpCall, hlo.OpFusion, hlo.OpGetTupleElement:
			return fmt.Errorf("not flat: %s is %v", x.Name, x.Op)
		}
		ops++
		if x == fc.Root {
			continue
		}
		if x.Op == hlo.OpReduce {
			if err := checkRowReduce(fc, x); err != nil {
				return err
			}
			continue
		}
		if x.Op == hlo.OpDot {
			if err := checkEpilogueDot(fc, x); err != nil {
				return err
			}
			continue
		}
		switch x.Op {
		case hlo.OpReduceWindow, hlo.OpConvolution, hlo.OpSort,
			hlo.OpScatter, hlo.OpDynamicUpdateSlice, hlo.OpSelectAndScatter:
			return fmt.Errorf("%v %s fused as a producer", x.Op, x.Name)
		case hlo.OpConstant:
			if lit := x.Attrs.Literal; lit.NumElements() > maxFusedConstant && !lit.IsUniform() {
				return fmt.Errorf("constant %s of %d elements fused", x.Name, lit.NumElements())
			}
		}
	}
	if bound := cmp.Or(cfg.MaxFusedInstructions, DefaultMaxFusedInstructions); ops > bound {
		return fmt.Errorf("%d instructions, over the bound %d", ops, bound)
	}
	if ops < 2 {
		return fmt.Errorf("%s fuses nothing (%d ops)", fc.Name, ops)
	}
	return nil
}

// checkNoDeadCode checks what DCE promises: every instruction is a parameter or
// reaches its computation's root, and every computation is reached from the entry.
func checkNoDeadCode(m *hlo.Module) error {
	reached := map[*hlo.Computation]bool{m.Entry: true}
	for i := len(m.Computations) - 1; i >= 0; i-- {
		c := m.Computations[i]
		if !reached[c] {
			return fmt.Errorf("computation %s is not called", c.Name)
		}
		live := map[*hlo.Instruction]bool{c.Root: true}
		for j := len(c.Instructions) - 1; j >= 0; j-- {
			in := c.Instructions[j]
			if !live[in] && in.Op != hlo.OpParameter {
				return fmt.Errorf("%s in %s is dead", in.Name, c.Name)
			}
			for _, x := range in.Operands {
				live[x] = true
			}
			for _, callee := range in.Called {
				reached[callee] = true
			}
		}
	}
	return nil
}

// nonParams counts c's instructions other than parameters and the
// get-tuple-elements that read a multi-output fusion's outputs (bookkeeping, not
// kernels: each replaces an instruction the fusion took in).
func nonParams(c *hlo.Computation) int {
	n := 0
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter || (in.Op == hlo.OpGetTupleElement && multiOutputKernel(in.Operands[0])) {
			continue
		}
		n++
	}
	return n
}

// multiOutputKernel reports an instruction that fusion makes with several outputs,
// read by get-tuple-elements that cost nothing: a fusion, or the variadic reduce
// sibling fusion makes of unfused sibling reductions.
func multiOutputKernel(in *hlo.Instruction) bool {
	return in.Op == hlo.OpFusion || (in.Op == hlo.OpReduce && in.Shape.IsTuple())
}

// checkRowReduce checks a reduce fused as a producer by row fusion's rules: a row
// reduction whose result dims lead the kernel's root dims (the root itself no
// reduce), read only along rows.
func checkRowReduce(fc *hlo.Computation, x *hlo.Instruction) error {
	rows, ok := hlo.RowReduceDims(x)
	out := fc.Root.Shape
	if fc.Root.Op == hlo.OpTuple { // a row kernel with siblings: its outputs share dims
		out = fc.Root.Operands[0].Shape
	}
	if !ok || fc.Root.Op == hlo.OpReduce || !out.IsArray() || out.Rank() < len(rows) || !slices.Equal(out.Dims[:len(rows)], rows) {
		return fmt.Errorf("reduce %s fused as a producer, and not as a row reduction of root %s %v", x.Name, fc.Root.Name, out)
	}
	readers := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range fc.Instructions {
		if in == fc.Root && in.Op == hlo.OpTuple {
			continue // a multi-output root stores each output at its own index (checkMultiOutput)
		}
		for _, o := range distinct(in.Operands) {
			readers[o] = append(readers[o], in)
		}
	}
	if !readsAlongRows(x, readers, len(rows)) {
		return fmt.Errorf("row reduction %s is read across rows", x.Name)
	}
	return nil
}

// checkEpilogueDot checks a dot fused as a producer by the epilogue rules: the
// kernel's only dot and no reduction, its operands parameters, read at each
// element's own index up to the root.
func checkEpilogueDot(fc *hlo.Computation, x *hlo.Instruction) error {
	readers := map[*hlo.Instruction][]*hlo.Instruction{}
	dots := 0
	for _, in := range fc.Instructions {
		for _, o := range distinct(in.Operands) {
			readers[o] = append(readers[o], in)
		}
		switch in.Op {
		case hlo.OpDot:
			dots++
		case hlo.OpReduce:
			return fmt.Errorf("dot %s shares its kernel with reduce %s", x.Name, in.Name)
		}
	}
	if dots != 1 {
		return fmt.Errorf("dot %s shares its kernel with %d other dots", x.Name, dots-1)
	}
	for _, o := range x.Operands {
		if o.Op != hlo.OpParameter {
			return fmt.Errorf("dot %s reads the computed %s", x.Name, o.Name)
		}
	}
	if !fc.Root.Shape.SameDims(x.Shape) || !readAtOwnIndex(x, readers, x.Shape) {
		return fmt.Errorf("dot %s is read elsewhere than at its own index", x.Name)
	}
	return nil
}

// checkMultiOutput checks a multi-output kernel: its tuple is the root, of at
// most maxFusionOutputs elementwise (or, from sibling fusion, data-movement)
// values with the dims of the first.
func checkMultiOutput(fc *hlo.Computation, x *hlo.Instruction) error {
	if x != fc.Root || len(x.Operands) < 2 || len(x.Operands) > maxFusionOutputs {
		return fmt.Errorf("tuple %s of %d values in a kernel, not its multi-output root", x.Name, len(x.Operands))
	}
	for _, o := range x.Operands { // elementwise, or a sibling kernel's data movement
		if !(isElementwiseOp(o) || o.Info().Kind == hlo.KindMovement) || !o.Shape.SameDims(x.Operands[0].Shape) {
			return fmt.Errorf("multi-output %s returns %s (%v %v)", x.Name, o.Name, o.Op, o.Shape)
		}
	}
	return nil
}

// onceOps counts, by opcode, the instructions of m that fusion may move but never
// copy.
func onceOps(m *hlo.Module) string {
	counts := map[hlo.Opcode]int{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			switch in.Op {
			case hlo.OpReduce: // by values reduced: sibling fusion merges reductions
				counts[in.Op] += len(in.Operands) / 2
			case hlo.OpDot, hlo.OpWhile, hlo.OpConditional:
				counts[in.Op]++
			default:
				if isExpensive(in) {
					counts[in.Op]++
				}
			}
		}
	}
	var parts []string
	for _, op := range hlo.AllOpcodes() {
		if counts[op] > 0 {
			parts = append(parts, fmt.Sprintf("%v×%d", op, counts[op]))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// literalBitsEqual compares shapes and element bits exactly (pred as truth values).
func literalBitsEqual(got, want *hlo.Literal) error {
	if !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	if got.Shape().IsTuple() {
		for i := range got.Elems() {
			if err := literalBitsEqual(got.Elems()[i], want.Elems()[i]); err != nil {
				return fmt.Errorf("tuple element %d: %w", i, err)
			}
		}
		return nil
	}
	for i := 0; i < got.NumElements(); i++ {
		same := got.Bits(i) == want.Bits(i)
		if got.DType() == hlo.Pred {
			same = got.Bool(i) == want.Bool(i)
		}
		if !same {
			return fmt.Errorf("%v element %d: got %s (bits %#x), want %s (bits %#x)", got.Shape(), i,
				hlo.FormatElement(got, i), got.Bits(i), hlo.FormatElement(want, i), want.Bits(i))
		}
	}
	return nil
}
