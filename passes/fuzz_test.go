package passes

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// FuzzPipeline builds a random valid module from the fuzz bytes, runs the pipeline
// on a copy with a random fusion bound (and sometimes passes switched off) and
// checks that the result verifies, that fusions are flat and follow the fusion
// rules, and that cpuref gives bit-identical results before and after: fusion only
// moves where an op is evaluated, and cpuref evaluates every op the same way inside
// a fused computation as outside it, so not even a NaN's payload may change.
//
// The input is read as an 8-byte header (dims, fusion bound, disabled passes,
// parameter count, root shape) followed by one byte per parameter and then one op
// per step (an op byte, an operand byte, then whatever the op reads); past the end
// every byte reads 0. `go test` runs the seeds; `go test -fuzz FuzzPipeline ./passes`
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

// checkPipelineOn builds the module the bytes describe and checks the pipeline on it.
func checkPipelineOn(t *testing.T, data []byte) pipelineStats {
	t.Helper()
	m, cfg, err := buildFuzzModule(data)
	if err != nil {
		t.Fatalf("generator built an invalid graph: %v", err)
	}
	h := fnv.New64a()
	h.Write(data)
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	var inputs []*hlo.Literal
	for _, p := range m.Entry.Params {
		inputs = append(inputs, fuzzInput(rng, p.Shape))
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
	fusionOn := !disabled("fusion")
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
	refCfg.Disabled = append(slices.Clone(cfg.Disabled), "fusion")
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
		case hlo.OpWhile, hlo.OpConditional, hlo.OpCall, hlo.OpFusion, hlo.OpTuple, hlo.OpGetTupleElement:
			return fmt.Errorf("not flat: %s is %v", x.Name, x.Op)
		}
		ops++
		if x == fc.Root {
			continue
		}
		switch x.Op {
		case hlo.OpReduce, hlo.OpDot, hlo.OpReduceWindow, hlo.OpConvolution, hlo.OpSort,
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

func nonParams(c *hlo.Computation) int {
	n := 0
	for _, in := range c.Instructions {
		if in.Op != hlo.OpParameter {
			n++
		}
	}
	return n
}

// onceOps counts, by opcode, the instructions of m that fusion may move but never
// copy.
func onceOps(m *hlo.Module) string {
	counts := map[hlo.Opcode]int{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			switch in.Op {
			case hlo.OpReduce, hlo.OpDot, hlo.OpWhile, hlo.OpConditional:
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

// fuzzInput is a literal of small, exactly representable values.
func fuzzInput(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	lit := hlo.NewLiteral(s)
	for i := 0; i < lit.NumElements(); i++ {
		setFuzzValue(lit, i, rng.IntN(9))
	}
	return lit
}

// setFuzzValue stores value number k (0…8): -2…2 in halves for f32, -4…4 for s32.
func setFuzzValue(lit *hlo.Literal, i, k int) {
	k = k%9 - 4
	if lit.DType() == hlo.F32 {
		lit.SetFloat64(i, float64(k)/2)
	} else {
		lit.SetInt64(i, int64(k))
	}
}

// --- the generator ---

const (
	fuzzMaxSteps  = 28  // steps in the entry
	fuzzMaxNested = 5   // steps in a loop body or branch
	fuzzMaxDim    = 24  // largest dimension a step may make
	fuzzMaxElems  = 144 // largest value a step may make
)

// fuzzBytes draws choices from the fuzz input; past its end every draw is 0.
type fuzzBytes struct {
	data []byte
	pos  int
}

func (r *fuzzBytes) done() bool { return r.pos >= len(r.data) }

func (r *fuzzBytes) next() int {
	if r.done() {
		return 0
	}
	r.pos++
	return int(r.data[r.pos-1])
}

func (r *fuzzBytes) intn(n int) int { return r.next() % n }

// fuzzGraph grows one computation. Every step appends the values it makes to vals,
// so later steps can use them again: values with several users are the rule.
type fuzzGraph struct {
	r        *fuzzBytes
	b        *hlo.Builder
	vals     []*hlo.Instruction // array values, parameters first
	preds    []*hlo.Instruction // compare results, for select
	nested   bool               // inside a loop body or branch: no more control flow
	reducers map[string]*hlo.Computation
	err      *error // the first error of a sub-builder
}

// buildFuzzModule decodes a module and a pipeline configuration from data.
func buildFuzzModule(data []byte) (*hlo.Module, Config, error) {
	r := &fuzzBytes{data: data}
	rows, cols := int64(1+r.intn(6)), int64(1+r.intn(6))
	cfg := Config{MaxFusionParams: 2 + r.intn(7)}
	// Small instruction bounds (derived, so that the corpus decodes as before) make
	// the random graphs split kernels too.
	cfg.MaxFusedInstructions = 3 * cfg.MaxFusionParams
	switch r.intn(10) {
	case 6:
		cfg.Disabled = []string{"fusion"}
	case 7:
		cfg.Disabled = []string{"dce"}
	case 8:
		cfg.Disabled = []string{"dce-after-fusion"}
	case 9:
		cfg.Disabled = []string{"dce", "dce-after-fusion"}
	}
	nParams, rootN, rootPicks := 1+r.intn(3), r.intn(4), []int{r.next(), r.next()}

	var sub error
	g := &fuzzGraph{r: r, b: hlo.NewBuilder("fuzz"), reducers: map[string]*hlo.Computation{}, err: &sub}
	for i := 0; i < nParams; i++ {
		spec := r.next()
		dt := hlo.F32
		if (spec>>3)%4 == 3 {
			dt = hlo.S32
		}
		var dims []int64
		switch spec % 8 {
		case 0, 1, 5:
			dims = []int64{rows, cols}
		case 2:
			dims = []int64{cols, rows}
		case 3:
			dims = []int64{rows}
		case 4:
			dims = []int64{cols}
		case 6:
			dims = nil
		case 7:
			dims = []int64{rows, 1}
		}
		g.vals = append(g.vals, g.b.Parameter(hlo.MakeShape(dt, dims...), fmt.Sprintf("p%d", i)))
	}
	for steps := 0; steps < fuzzMaxSteps && !r.done() && g.ok(); steps++ {
		g.step()
	}
	if !g.ok() {
		return nil, cfg, g.error()
	}
	// One of the latest values (it may have users), or a tuple of it and others.
	root := g.vals[len(g.vals)-1-rootPicks[0]%min(3, len(g.vals))]
	if rootN > 0 {
		root = g.vals[len(g.vals)-1]
		elems := []*hlo.Instruction{root}
		for _, p := range rootPicks[:rootN-1] {
			elems = append(elems, g.vals[p%len(g.vals)])
		}
		root = g.b.Tuple(elems...)
	}
	m, err := g.b.Build(root)
	return m, cfg, err
}

func (g *fuzzGraph) ok() bool { return g.b.Err() == nil && *g.err == nil }

func (g *fuzzGraph) error() error {
	if *g.err != nil {
		return *g.err
	}
	return g.b.Err()
}

// push records v as a value later steps may use and returns it.
func (g *fuzzGraph) push(v *hlo.Instruction) *hlo.Instruction {
	if v != nil {
		g.vals = append(g.vals, v)
	}
	return v
}

// pick returns an earlier value: one of the latest three when the byte is odd (so
// chains and fan-out are common), any otherwise.
func (g *fuzzGraph) pick() *hlo.Instruction {
	v := g.r.next()
	if v&1 == 1 {
		return g.vals[len(g.vals)-1-(v>>1)%min(3, len(g.vals))]
	}
	return g.vals[(v>>1)%len(g.vals)]
}

// find returns a value other than x satisfying ok, starting the search at a byte's
// choice, or nil.
func (g *fuzzGraph) find(x *hlo.Instruction, ok func(v *hlo.Instruction) bool) *hlo.Instruction {
	start, n := g.r.next(), len(g.vals)
	for i := range n {
		if v := g.vals[(start+i)%n]; v != x && ok(v) {
			return v
		}
	}
	return nil
}

// like returns a value of x's shape: another one, a conversion of one with x's dims,
// x itself, or a constant.
func (g *fuzzGraph) like(x *hlo.Instruction) *hlo.Instruction {
	if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(x.Shape) }); v != nil {
		return v
	}
	switch g.r.intn(3) {
	case 0:
		return x
	case 1:
		if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.SameDims(x.Shape) }); v != nil {
			return g.push(g.b.Convert(v, x.Shape.DType))
		}
	}
	return g.push(g.constant(x.Shape, g.r.intn(2) == 0))
}

// coerce returns a value of shape s: the latest one, a conversion of the latest with
// s's dims, or a broadcast of a reduction of the latest value.
func (g *fuzzGraph) coerce(s hlo.Shape) *hlo.Instruction {
	for i := len(g.vals) - 1; i >= 0; i-- {
		if g.vals[i].Shape.Equal(s) {
			return g.vals[i]
		}
	}
	for i := len(g.vals) - 1; i >= 0; i-- {
		if g.vals[i].Shape.SameDims(s) {
			return g.push(g.b.Convert(g.vals[i], s.DType))
		}
	}
	v := g.vals[len(g.vals)-1]
	if !v.Shape.IsScalar() {
		v = g.reduce(v, true)
	}
	if v.Shape.DType != s.DType {
		v = g.push(g.b.Convert(v, s.DType))
	}
	if s.IsScalar() {
		return v
	}
	return g.push(g.b.BroadcastScalar(v, s.Dims...))
}

// constant makes a constant of shape s: uniform (a splat) or not.
func (g *fuzzGraph) constant(s hlo.Shape, uniform bool) *hlo.Instruction {
	lit := hlo.NewLiteral(s)
	k := g.r.next()
	for i := 0; i < lit.NumElements(); i++ {
		setFuzzValue(lit, i, k)
		if !uniform {
			k = (k*5 + 3) % 251
		}
	}
	return g.b.Constant(lit)
}

func (g *fuzzGraph) scalarConst(dt hlo.DType) *hlo.Instruction {
	return g.constant(hlo.Scalar(dt), true)
}

// reducer returns the shared add or max computation for dt.
func (g *fuzzGraph) reducer(op hlo.Opcode, dt hlo.DType) *hlo.Computation {
	key := fmt.Sprint(op, dt)
	if c, ok := g.reducers[key]; ok {
		return c
	}
	c, err := hlo.ScalarReducer(op, dt)
	if err != nil && *g.err == nil {
		*g.err = err
	}
	g.reducers[key] = c
	return c
}

func fits(dims ...int64) bool {
	n := int64(1)
	for _, d := range dims {
		if d < 1 || d > fuzzMaxDim {
			return false
		}
		n *= d
	}
	return n <= fuzzMaxElems
}

func otherType(dt hlo.DType) hlo.DType {
	if dt == hlo.F32 {
		return hlo.S32
	}
	return hlo.F32
}

// step applies the op the next byte names to the value the byte after picks.
func (g *fuzzGraph) step() {
	op := g.r.next()
	g.apply(op, g.pick())
}

// apply adds op on x (and whatever else it needs), records the values made and
// returns the last.
func (g *fuzzGraph) apply(op int, x *hlo.Instruction) *hlo.Instruction {
	b := g.b
	s := x.Shape
	rank := s.Rank()
	switch op % 23 {
	case 0, 1:
		return g.push(g.unary(x))
	case 2, 3:
		return g.push(g.binary(x, g.like(x)))
	case 4:
		return g.push(g.compareSelect(x))
	case 5:
		return g.push(b.Convert(x, otherType(s.DType)))
	case 6:
		return g.broadcast(x)
	case 7:
		if rank == 2 {
			return g.push(b.Transpose(x, 1, 0))
		}
		return g.push(b.Transpose(x, []int64{0}[:rank]...))
	case 8:
		return g.reshape(x)
	case 9:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.push(g.slice(x))
	case 10:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.concatenate(x)
	case 11:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.pad(x)
	case 12:
		if rank == 0 {
			return g.push(g.unary(x))
		}
		var dims []int64
		bits := g.r.next()
		for d := range rank {
			if bits>>d&1 == 1 {
				dims = append(dims, int64(d))
			}
		}
		if len(dims) == 0 {
			dims = []int64{int64(rank - 1)}
		}
		return g.push(b.Reverse(x, dims...))
	case 13:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.reduce(x, g.r.intn(3) == 0)
	case 14:
		return g.dot(x)
	case 15:
		var c *hlo.Instruction
		switch g.r.intn(4) {
		case 0:
			c = g.push(g.constant(s, false)) // fusible only up to 16 elements
		case 1:
			c = g.push(g.constant(s, true)) // a splat of any size fuses
		case 2:
			c = g.push(b.BroadcastScalar(g.scalarConst(s.DType), s.Dims...))
		default:
			if rank == 0 {
				c = g.push(g.constant(s, true))
			} else {
				c = g.push(b.Iota(s, int64(g.r.intn(rank))))
			}
		}
		return g.push(g.binary(x, c))
	case 16:
		lo, hi := g.scalarConst(s.DType), g.scalarConst(s.DType)
		if g.r.next()&1 == 1 {
			lo, hi = g.like(x), g.like(x)
		}
		return g.push(b.Clamp(lo, x, hi))
	case 17:
		if rank == 0 {
			return g.broadcast(x)
		}
		sizes := make([]int64, rank)
		for i, d := range s.Dims {
			sizes[i] = int64(1 + g.r.intn(int(d)))
		}
		return g.push(b.DynamicSlice(x, g.starts(rank), sizes))
	case 18:
		if rank == 0 {
			return g.broadcast(x)
		}
		upd := g.push(g.slice(g.like(x)))
		return g.push(b.DynamicUpdateSlice(x, upd, g.starts(rank)))
	case 19:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.variadicReduce(x)
	case 20:
		// A producer with several users: made here, then used by two or three
		// further steps, whatever they are.
		y := g.apply([]int{0, 2, 5, 6, 7, 9, 11, 12, 15, 17}[g.r.intn(10)], x)
		last := y
		for n := 2 + g.r.intn(2); n > 0 && g.ok(); n-- {
			last = g.apply(g.r.next()%20, y)
		}
		return last
	case 21:
		if g.nested {
			return g.push(g.unary(x))
		}
		return g.while(x)
	default:
		if g.nested {
			return g.push(g.binary(x, g.like(x)))
		}
		return g.conditional(x)
	}
}

// starts returns rank s32 scalars for dynamic-slice and dynamic-update-slice:
// constants (-4…4, clamped by the op) or a computed value.
func (g *fuzzGraph) starts(rank int) []*hlo.Instruction {
	out := make([]*hlo.Instruction, rank)
	for i := range out {
		if g.r.next()&1 == 1 {
			out[i] = g.coerce(hlo.Scalar(hlo.S32))
		} else {
			out[i] = g.scalarConst(hlo.S32)
		}
	}
	return out
}

// variadicReduce reduces x and a value of its dims together, with a reducer
// returning (sum, max): a reduce of tuple shape.
func (g *fuzzGraph) variadicReduce(x *hlo.Instruction) *hlo.Instruction {
	s := x.Shape
	y := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.SameDims(s) })
	if y == nil {
		y = x
	}
	dims := []int64{int64(g.r.intn(s.Rank()))}
	if g.r.intn(3) == 0 {
		dims = []int64{}
		for d := range s.Rank() {
			dims = append(dims, int64(d))
		}
	}
	key := fmt.Sprint("pair", s.DType, y.Shape.DType)
	comp, ok := g.reducers[key]
	if !ok {
		rb := hlo.NewBuilder(fmt.Sprintf("sum_max_%v_%v", s.DType, y.Shape.DType))
		a0, a1 := rb.Parameter(hlo.Scalar(s.DType), "acc0"), rb.Parameter(hlo.Scalar(y.Shape.DType), "acc1")
		v0, v1 := rb.Parameter(hlo.Scalar(s.DType), "x0"), rb.Parameter(hlo.Scalar(y.Shape.DType), "x1")
		c, err := rb.BuildComputation(rb.Tuple(rb.Add(a0, v0), rb.Max(a1, v1)))
		if err != nil {
			*g.err = err
			return nil
		}
		comp, g.reducers[key] = c, c
	}
	b := g.b
	r := b.Reduce([]*hlo.Instruction{x, y},
		[]*hlo.Instruction{b.ScalarConstant(s.DType, 0), b.ScalarConstant(y.Shape.DType, lowest(y.Shape.DType))}, comp, dims)
	out := g.push(b.GetTupleElement(r, 0))
	if g.r.next()&1 == 1 {
		out = g.push(b.GetTupleElement(r, 1))
	}
	return out
}

// lowest is max's identity.
func lowest(dt hlo.DType) float64 {
	if dt == hlo.S32 {
		return math.MinInt32
	}
	return math.Inf(-1)
}

var (
	f32Unary  = []hlo.Opcode{hlo.OpNegate, hlo.OpAbs, hlo.OpFloor, hlo.OpSign, hlo.OpExp, hlo.OpSqrt, hlo.OpTanh, hlo.OpCopy}
	s32Unary  = []hlo.Opcode{hlo.OpNegate, hlo.OpAbs, hlo.OpSign, hlo.OpNot, hlo.OpPopcnt, hlo.OpCopy}
	f32Binary = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum,
		hlo.OpDivide, hlo.OpRemainder, hlo.OpPower}
	s32Binary = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum,
		hlo.OpDivide, hlo.OpRemainder, hlo.OpAnd, hlo.OpOr}
	directions = []hlo.ComparisonDirection{hlo.CmpEQ, hlo.CmpNE, hlo.CmpLT, hlo.CmpLE, hlo.CmpGT, hlo.CmpGE}
)

func (g *fuzzGraph) unary(x *hlo.Instruction) *hlo.Instruction {
	ops := f32Unary
	if x.Shape.DType == hlo.S32 {
		ops = s32Unary
	}
	op := ops[g.r.intn(len(ops))]
	if op == hlo.OpCopy {
		return g.b.Copy(x)
	}
	return g.b.Unary(op, x)
}

func (g *fuzzGraph) binary(x, y *hlo.Instruction) *hlo.Instruction {
	ops := f32Binary
	if x.Shape.DType == hlo.S32 {
		ops = s32Binary
	}
	if g.r.next()&1 == 1 {
		x, y = y, x
	}
	return g.b.Binary(ops[g.r.intn(len(ops))], x, y)
}

// compareSelect selects between two values of x's dims by a comparison of x with a
// value like it, or by an earlier comparison of the same dims.
func (g *fuzzGraph) compareSelect(x *hlo.Instruction) *hlo.Instruction {
	var pred *hlo.Instruction
	if g.r.next()&1 == 1 {
		for _, p := range g.preds {
			if p.Shape.SameDims(x.Shape) {
				pred = p
			}
		}
	}
	if pred == nil {
		pred = g.b.Compare(x, g.like(x), directions[g.r.intn(len(directions))])
		g.preds = append(g.preds, pred)
	}
	a := x
	if g.r.next()&1 == 1 {
		if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.SameDims(x.Shape) }); v != nil {
			a = v
		}
	}
	return g.b.Select(pred, a, g.like(a))
}

// broadcast broadcasts a scalar or rank-1 x to rank 1 or 2; for a rank-2 x, it
// broadcasts a scalar to x's shape and combines the two.
func (g *fuzzGraph) broadcast(x *hlo.Instruction) *hlo.Instruction {
	b, s := g.b, x.Shape
	k := int64(1 + g.r.intn(6))
	switch s.Rank() {
	case 0:
		if g.r.next()&1 == 1 {
			return g.push(b.BroadcastScalar(x, k))
		}
		return g.push(b.BroadcastScalar(x, k, int64(1+g.r.intn(6))))
	case 1:
		n := s.Dims[0]
		if !fits(n, k) {
			return g.push(g.unary(x))
		}
		if g.r.next()&1 == 1 {
			return g.push(b.Broadcast(x, []int64{n, k}, []int64{0}))
		}
		return g.push(b.Broadcast(x, []int64{k, n}, []int64{1}))
	}
	sc := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(hlo.Scalar(s.DType)) })
	if sc == nil {
		sc = g.reduce(x, true)
	}
	return g.push(g.binary(x, g.push(b.BroadcastScalar(sc, s.Dims...))))
}

func (g *fuzzGraph) reshape(x *hlo.Instruction) *hlo.Instruction {
	b, d := g.b, x.Shape.Dims
	switch len(d) {
	case 0:
		if g.r.next()&1 == 1 {
			return g.push(b.Reshape(x, 1))
		}
		return g.push(b.Reshape(x, 1, 1))
	case 1:
		n := d[0]
		var divs []int64
		for k := int64(1); k <= n; k++ {
			if n%k == 0 {
				divs = append(divs, k)
			}
		}
		k := divs[g.r.intn(len(divs))]
		if n == 1 && g.r.next()&1 == 1 {
			return g.push(b.Reshape(x))
		}
		return g.push(b.Reshape(x, k, n/k))
	}
	switch g.r.intn(3) {
	case 0:
		if fits(d[0] * d[1]) {
			return g.push(b.Reshape(x, d[0]*d[1]))
		}
	case 1:
		if fits(1, d[0]*d[1]) {
			return g.push(b.Reshape(x, 1, d[0]*d[1]))
		}
	}
	return g.push(b.Reshape(x, d[1], d[0]))
}

func (g *fuzzGraph) slice(x *hlo.Instruction) *hlo.Instruction {
	d := x.Shape.Dims
	starts, limits, strides := make([]int64, len(d)), make([]int64, len(d)), make([]int64, len(d))
	for i, n := range d {
		starts[i] = int64(g.r.intn(int(n)))
		limits[i] = starts[i] + 1 + int64(g.r.intn(int(n-starts[i])))
		strides[i] = int64(1 + g.r.intn(2))
	}
	return g.b.Slice(x, starts, limits, strides)
}

// concatenate joins x with one or two values whose dims match but for the joined
// dimension (x itself when none does).
func (g *fuzzGraph) concatenate(x *hlo.Instruction) *hlo.Instruction {
	s := x.Shape
	dim := g.r.intn(s.Rank())
	matches := func(v *hlo.Instruction) bool {
		if v.Shape.DType != s.DType || v.Shape.Rank() != s.Rank() {
			return false
		}
		for i := range s.Dims {
			if i != dim && v.Shape.Dims[i] != s.Dims[i] {
				return false
			}
		}
		return true
	}
	xs := []*hlo.Instruction{x}
	for n := 1 + g.r.intn(2); n > 0; n-- {
		y := g.find(x, matches)
		if y == nil {
			y = x
		}
		xs = append(xs, y)
	}
	out := slices.Clone(s.Dims)
	out[dim] = 0
	for _, v := range xs {
		out[dim] += v.Shape.Dims[dim]
	}
	for !fits(out...) && len(xs) > 1 {
		out[dim] -= xs[len(xs)-1].Shape.Dims[dim]
		xs = xs[:len(xs)-1]
	}
	if len(xs) == 1 {
		return g.push(g.unary(x))
	}
	return g.push(g.b.Concatenate(int64(dim), xs...))
}

// pad pads x by -1…2 at each end and 0 or 1 inside, with a constant or an earlier
// scalar.
func (g *fuzzGraph) pad(x *hlo.Instruction) *hlo.Instruction {
	d := x.Shape.Dims
	pads := make([]hlo.PadDim, len(d))
	out := make([]int64, len(d))
	for i, n := range d {
		p := hlo.PadDim{Low: int64(g.r.intn(4) - 1), High: int64(g.r.intn(4) - 1), Interior: int64(g.r.intn(2))}
		size := n + (n-1)*p.Interior + p.Low + p.High
		if size < 1 {
			p.Low, p.High = 0, 0
			size = n + (n-1)*p.Interior
		}
		pads[i], out[i] = p, size
	}
	if !fits(out...) {
		return g.push(g.unary(x))
	}
	v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(hlo.Scalar(x.Shape.DType)) })
	if v == nil || g.r.next()&1 == 1 {
		v = g.scalarConst(x.Shape.DType)
	}
	return g.push(g.b.Pad(x, v, pads))
}

// reduce adds a reduction of x with add or max over one dimension or all.
func (g *fuzzGraph) reduce(x *hlo.Instruction, all bool) *hlo.Instruction {
	s := x.Shape
	dims := []int64{int64(g.r.intn(max(s.Rank(), 1)))}
	if all || s.Rank() == 0 {
		dims = []int64{}
		for d := range s.Rank() {
			dims = append(dims, int64(d))
		}
	}
	op, init := hlo.OpAdd, 0.0
	choice := g.r.next()
	if choice&1 == 1 {
		op, init = hlo.OpMaximum, lowest(s.DType)
	}
	// The initial value: the identity, or sometimes an earlier scalar (used by
	// other instructions too).
	var start *hlo.Instruction
	if choice&2 == 2 {
		start = g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(hlo.Scalar(s.DType)) })
	}
	if start == nil {
		start = g.b.ScalarConstant(s.DType, init)
	}
	return g.push(g.b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{start}, g.reducer(op, s.DType), dims))
}

// dot contracts x's last dimension with the first of a value of the same type, or of
// x's transpose when none fits.
func (g *fuzzGraph) dot(x *hlo.Instruction) *hlo.Instruction {
	s := x.Shape
	if s.Rank() == 0 {
		return g.push(g.binary(x, g.like(x)))
	}
	k := s.Dims[s.Rank()-1]
	y := g.find(nil, func(v *hlo.Instruction) bool {
		return v.Shape.DType == s.DType && v.Shape.Rank() >= 1 && v.Shape.Dims[0] == k &&
			(s.Rank() == 1 || v.Shape.Rank() == 1 || fits(s.Dims[0], v.Shape.Dims[1]))
	})
	if y == nil {
		y = x
		if s.Rank() == 2 {
			if !fits(s.Dims[0], s.Dims[0]) {
				return g.push(g.binary(x, g.like(x)))
			}
			y = g.push(g.b.Transpose(x, 1, 0))
		}
	}
	return g.push(g.b.Dot(x, y))
}

// while runs a loop of 1…3 iterations over (counter, x, w), its body a few random
// steps on x and w.
func (g *fuzzGraph) while(x *hlo.Instruction) *hlo.Instruction {
	w := g.pick()
	trip := float64(1 + g.r.intn(3))
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), x.Shape, w.Shape)

	cb := hlo.NewBuilder("cond")
	s := cb.Parameter(state, "s")
	i := cb.GetTupleElement(s, 0)
	cond, err := cb.BuildComputation(cb.Compare(i, cb.ScalarConstant(hlo.S32, trip), hlo.CmpLT))
	if err != nil {
		*g.err = err
		return nil
	}

	bb := hlo.NewBuilder("body")
	s = bb.Parameter(state, "s")
	i1 := bb.Add(bb.GetTupleElement(s, 0), bb.ScalarConstant(hlo.S32, 1))
	v, u := bb.GetTupleElement(s, 1), bb.GetTupleElement(s, 2)
	sub := g.nestedGraph(bb, v, u)
	v1 := sub.coerce(x.Shape)
	u1 := u
	if g.r.next()&1 == 1 {
		u1 = sub.coerce(w.Shape)
	}
	body, err := bb.BuildComputation(bb.Tuple(i1, v1, u1))
	if err != nil {
		*g.err = err
		return nil
	}

	b := g.b
	loop := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x, w))
	out := g.push(b.GetTupleElement(loop, 1))
	if g.r.next()&1 == 1 {
		out = g.push(b.GetTupleElement(loop, 2))
	}
	return out
}

// conditional calls a computation, or picks one of two or three branches, each a few random steps from its
// own argument to a value of x's shape, by a pred or an s32 index (out of range runs
// the last branch).
func (g *fuzzGraph) conditional(x *hlo.Instruction) *hlo.Instruction {
	b := g.b
	n := 1 + g.r.intn(3)
	if n == 1 {
		// A call of a computation of one or two arguments.
		args := []*hlo.Instruction{x, g.pick()}[:1+g.r.intn(2)]
		cb := hlo.NewBuilder("callee")
		var params []*hlo.Instruction
		for i, a := range args {
			params = append(params, cb.Parameter(a.Shape, fmt.Sprintf("arg%d", i)))
		}
		sub := g.nestedGraph(cb, params...)
		c, err := cb.BuildComputation(sub.coerce(x.Shape))
		if err != nil {
			*g.err = err
			return nil
		}
		return g.push(b.Call(c, args...))
	}
	var sel *hlo.Instruction
	if n == 2 && g.r.next()&1 == 1 {
		dt := []hlo.DType{hlo.F32, hlo.S32}[g.r.intn(2)]
		sel = b.Compare(g.coerce(hlo.Scalar(dt)), g.scalarConst(dt), hlo.CmpGT)
	} else {
		sel = g.coerce(hlo.Scalar(hlo.S32))
	}
	args := []*hlo.Instruction{x}
	for len(args) < n {
		args = append(args, g.pick())
	}
	var branches []*hlo.Computation
	for k, a := range args {
		bb := hlo.NewBuilder(fmt.Sprintf("branch%d", k))
		sub := g.nestedGraph(bb, bb.Parameter(a.Shape, "arg"))
		c, err := bb.BuildComputation(sub.coerce(x.Shape))
		if err != nil {
			*g.err = err
			return nil
		}
		branches = append(branches, c)
	}
	return g.push(b.Conditional(sel, branches, args))
}

// nestedGraph runs a few steps in a loop body or branch builder over vals.
func (g *fuzzGraph) nestedGraph(b *hlo.Builder, vals ...*hlo.Instruction) *fuzzGraph {
	sub := &fuzzGraph{r: g.r, b: b, vals: vals, nested: true, reducers: g.reducers, err: g.err}
	for n := 1 + g.r.intn(fuzzMaxNested); n > 0 && !g.r.done() && sub.ok(); n-- {
		sub.step()
	}
	if err := b.Err(); err != nil && *g.err == nil {
		*g.err = err
	}
	return sub
}
