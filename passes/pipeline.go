// Package passes holds the HLO-to-HLO optimisation passes and the one ordered
// pipeline that runs them. A pass is a plain function over a module that rewrites it
// in place and reports whether it changed anything; the module is verified before
// the pipeline and after every pass that changed it, so a pass that breaks an
// invariant is named at once.
package passes

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// Pass is one step of the pipeline.
type Pass struct {
	// Name is how options and dumps refer to the pass.
	Name string
	// Summary is one line on what it does.
	Summary string
	Run     func(m *hlo.Module, cfg Config) (changed bool, err error)
	// Required passes lower ops code generation lacks; disabling one is an error.
	Required bool
}

// Pipeline is every pass, in the order Run applies them.
var Pipeline = []Pass{
	// The expanders come first and cannot be disabled: they lower ops that code
	// generation lacks (hlo.OpInfo.ExpandedBy names them), custom-calls first, as a
	// decomposition may use the other expanded ops; but maps before them, as a
	// mapped computation may hold expanded elementwise ops.
	{Name: hlo.MapInliner, Summary: "inline each map's scalar computation over whole arrays", Run: ExpandMap, Required: true},
	{Name: hlo.CustomCallExpander, Summary: "replace custom-calls by their registered decompositions", Run: ExpandCustomCalls, Required: true},
	// rng before the other expanders (its expansion uses rng-bit-generator), and
	// the state threaded before any pass could reorder the draws.
	{Name: hlo.RngExpander, Summary: "lower rng to rng-get-and-update-state, Philox bits and their conversion to values", Run: ExpandRng, Required: true},
	{Name: hlo.RngStateExpander, Summary: "make the RNG state an entry parameter and output, threaded through while loops, that each rng-get-and-update-state offsets", Run: ThreadRngState, Required: true},
	{Name: hlo.BatchNormExpander, Summary: "lower batch-norm-training, -inference and -grad to arithmetic and reductions", Run: ExpandBatchNorm, Required: true},
	{Name: hlo.RngBitGeneratorExpander, Summary: "lower rng-bit-generator to Philox or Threefry in integer ops", Run: ExpandRngBitGenerator, Required: true},
	{Name: hlo.ReducePrecisionExpander, Summary: "lower reduce-precision to integer rounding on the float's bits", Run: ExpandReducePrecision, Required: true},
	{Name: hlo.DimensionSizeExpander, Summary: "replace get-dimension-size of static shapes by s32 constants", Run: ExpandDimensionSizes, Required: true},
	{Name: hlo.MulHiExpander, Summary: "lower mulhi to wide or 32-bit-limb integer products", Run: ExpandMulHi, Required: true},
	{Name: hlo.TopKDecomposer, Summary: "lower topk to a stable sort and slices", Run: ExpandTopK, Required: true},
	{Name: hlo.TriangularSolveExpander, Summary: "lower triangular-solve to row-by-row substitution in a while loop", Run: ExpandTriangularSolve, Required: true},
	{Name: hlo.CholeskyExpander, Summary: "lower cholesky to a column-by-column while loop", Run: ExpandCholesky, Required: true},
	{Name: hlo.BitcastExpander, Summary: "lower bitcasts to the reshape and transposes their layouts stand for", Run: ExpandBitcast, Required: true},
	{Name: hlo.AfterAllExpander, Summary: "replace after-all by a token constant (tokens hold no bytes)", Run: ExpandAfterAll, Required: true},
	{Name: "operand-upcaster", Summary: "convert the operands of dots and convolutions with a wider result type to it", Run: UpcastOperands, Required: true},
	{Name: hlo.CollectiveExpander, Summary: "lower one-device collectives to identities, zeros and constant ids", Run: ExpandCollectives, Required: true},
	{Name: "simplify", Summary: "apply algebraic identities that hold bit for bit (movement chains, no-op moves and converts, x*1)", Run: Simplify},
	{Name: "constant-folding", Summary: "replace instructions of constants by constants of their values (cpuref), up to 1 MiB", Run: FoldConstants},
	{Name: "cse", Summary: "merge instructions that compute the same value", Run: CSE},
	{Name: "dce", Summary: "remove instructions and computations nothing uses", Run: DCE},
	{Name: "split-loop-fills", Summary: "give each while loop its own copy of a shared fill (broadcast constant) in its initial state, which the state then takes over", Run: SplitLoopFills},
	{Name: "reduce-to-dot", Summary: "rewrite a sum of products of two broadcasts (reduce(multiply(broadcast(a), broadcast(b)))) as a dot of a and b", Run: ReduceToDot},
	{Name: "transpose-folding", Summary: "read a dot's transposed operands in place through its dimension numbers", Run: TransposeFolding},
	// After reduce-to-dot and transpose-folding, which make or change dots.
	{Name: "complex-dot-expander", Summary: "rewrite a dot or convolution of complex operands as four real ones of their parts joined by complex", Run: ExpandComplexDots, Required: true},
	{Name: "fusion", Summary: "fuse elementwise and data-movement producers into their consumers' kernels", Run: Fusion},
	{Name: "sibling-fusion", Summary: "merge loop kernels that read the same array into one multi-output kernel", Run: SiblingFusion},
	{Name: "dce-after-fusion", Summary: "remove producers that fusion made dead", Run: DCE},
	{Name: "schedule", Summary: "order instructions so that fewer bytes are live at once", Run: Schedule},
	{Name: "remat", Summary: "recompute values instead of keeping them live when over Config.MemoryBudget", Run: Rematerialize},
	{Name: "host-offload", Summary: "move values live across the peak to host memory when remat leaves the plan over Config.MemoryBudget", Run: OffloadToMeetBudget},
	// Last of all, so that no pass before it looks through a barrier.
	{Name: hlo.OptBarrierExpander, Summary: "replace opt-barriers by their operands, after every pass they fence", Run: ExpandOptBarriers, Required: true},
}

// Config carries what passes need to know about the target and the caller's wishes.
type Config struct {
	// Disabled names passes to skip (XLA's xla_disable_hlo_passes).
	Disabled []string
	// MaxFusionParams bounds the parameters of one fused computation (the kernel's
	// storage-buffer bindings, outputs aside); 0 means DefaultMaxFusionParams.
	MaxFusionParams int
	// Bindings says how many storage-buffer bindings a kernel takes for an
	// argument of so many bytes (codegen.Target.Bindings: one per piece of a
	// tensor split across bindings); fusion counts parameters by it, each at least
	// one, against MaxFusionParams. nil: one each.
	Bindings func(bytes int64) int
	// MaxFusedInstructions bounds the instructions of one fused computation,
	// parameters aside; 0 means DefaultMaxFusedInstructions.
	MaxFusedInstructions int
	// MemoryBudget, when positive, is the peak the remat pass aims for, in the
	// memory model (bytes: heapsim's PeakBytes, what the plan allocates).
	MemoryBudget int64
	// Memory is the memory model's facts about the target (kernels, allocation
	// limits) that the schedule and remat passes decide with; the planner passes
	// its own, so the passes' model is the plan's. Zero: heapsim's coarse kernels.
	Memory heapsim.Config
	// AfterPass, when set, sees the module after every pass that changed it (for
	// VKXLA_DUMP); index is the pass's position in Pipeline.
	AfterPass func(index int, name string, m *hlo.Module)
	// Devices is how many devices (replicas × partitions) run the program; 0 or
	// 1 is one. On several, the collectives stay for the planner's host steps.
	Devices int
}

// DefaultMaxFusionParams is the parameter bound when Config leaves it 0. Vulkan
// guarantees only 4 storage buffers per stage, too few to fuse anything; the
// runtime passes the device's own limit less room for outputs and scratch.
const DefaultMaxFusionParams = 12

// DefaultMaxFusedInstructions is the instruction bound of a fused computation
// when Config leaves it 0. It keeps one kernel's code generation and the driver's
// compilation of it short (docs/passes.md): a longer chain of elementwise ops is
// split into several kernels, each reading the previous one's buffer.
const DefaultMaxFusedInstructions = 256

// Names lists the pipeline's pass names in order.
func Names() []string {
	names := make([]string, len(Pipeline))
	for i, p := range Pipeline {
		names[i] = p.Name
	}
	return names
}

// OptionalNames lists the passes that may be disabled (all but the Required
// expanders), in order: WithoutPasses(OptionalNames()...) compiles with nothing
// but the lowering code generation needs.
func OptionalNames() []string {
	var names []string
	for _, p := range Pipeline {
		if !p.Required {
			names = append(names, p.Name)
		}
	}
	return names
}

// Run applies the pipeline to m in place.
func Run(m *hlo.Module, cfg Config) error {
	for _, name := range cfg.Disabled {
		if !slices.Contains(Names(), name) {
			return fmt.Errorf("passes: unknown pass %q to disable (passes: %v)", name, Names())
		}
		if i := slices.IndexFunc(Pipeline, func(p Pass) bool { return p.Name == name }); Pipeline[i].Required {
			return fmt.Errorf("passes: pass %q cannot be disabled: it lowers ops code generation lacks", name)
		}
	}
	if err := hlo.Verify(m); err != nil {
		return fmt.Errorf("passes: input module: %w", err)
	}
	for i, p := range Pipeline {
		if slices.Contains(cfg.Disabled, p.Name) {
			continue
		}
		changed, err := p.Run(m, cfg)
		if err != nil {
			return fmt.Errorf("passes: %s: %w", p.Name, err)
		}
		if !changed {
			continue
		}
		if err := hlo.Verify(m); err != nil {
			return fmt.Errorf("passes: %s left an invalid module: %w", p.Name, err)
		}
		if cfg.AfterPass != nil {
			cfg.AfterPass(i, p.Name, m)
		}
	}
	return nil
}
