package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
	"github.com/vkxla/vkxla/passes"
)

// GradCase is a training step produced by autodiff (hlo/nn/train) whose memory
// is measured: the step module and its inputs (initial state, then the batch),
// and the same step with its layers in checkpointed regions (same inputs).
type GradCase struct {
	Name         string
	Step         *train.Step
	Inputs       func() []*hlo.Literal
	Checkpointed []CheckpointedStep
	// FloorStep is the floor search's stopping width as a fraction of the
	// unbudgeted peak; 0 is FloorResolution (a smoke run takes a coarser one).
	FloorStep float64
}

// CheckpointedStep is a case's step built with checkpointed regions
// (train.Remat); Name says which.
type CheckpointedStep struct {
	Name string
	Step *train.Step
}

// checkpointedSteps builds the model of each Remat (by its name).
func checkpointedSteps(remats []namedRemat, model func(train.Remat) train.Model) ([]CheckpointedStep, error) {
	var out []CheckpointedStep
	for _, r := range remats {
		step, err := train.Build(model(r.remat), train.SGD{LR: 0.01})
		if err != nil {
			return nil, err
		}
		out = append(out, CheckpointedStep{Name: r.name, Step: step})
	}
	return out, nil
}

// offloadOutputs checkpoints all n layers as one region whose policy keeps each
// layer's output in host memory (save_and_offload_only_these_names): the
// backward pass moves each back and recomputes its layer from it.
func offloadOutputs(n int) train.Remat {
	return train.Remat{Every: n, Name: "out", Policy: hlo.SaveAndOffloadOnlyTheseNames(nil, []string{"out"})}
}

type namedRemat struct {
	name  string
	remat train.Remat
}

// DeepMLPCase is the step (plain SGD) of an MLP of `layers` dense layers of
// width×width with ReLU, softmax cross-entropy over `width` classes, on a batch
// of `batch` rows: with batch ≫ width, the activations (batch×width each, all
// live when the backward pass starts) are much larger than the weights.
func DeepMLPCase(layers, width, batch int) (GradCase, error) {
	sizes := make([]int64, layers+1)
	for i := range sizes {
		sizes[i] = int64(width)
	}
	name := fmt.Sprintf("mlp%d", layers)
	step, err := train.Build(train.MLP(name, hlo.F32, int64(batch), sizes...), train.SGD{LR: 0.01})
	if err != nil {
		return GradCase{}, err
	}
	segment := max(int(math.Round(math.Sqrt(float64(layers)))), 1)
	ckpt, err := checkpointedSteps([]namedRemat{
		{fmt.Sprintf("regions of %d layers, nothing_saveable", segment), train.Remat{Every: segment, Policy: hlo.NothingSaveable()}},
		{"each layer a region, dots_saveable", train.Remat{Every: 1, Policy: hlo.DotsSaveable()}},
		{"one region, every layer's output offloaded to host memory", offloadOutputs(layers)},
	}, func(r train.Remat) train.Model {
		return train.CheckpointedMLP(name, hlo.F32, int64(batch), r, sizes...)
	})
	if err != nil {
		return GradCase{}, err
	}
	return GradCase{
		Checkpointed: ckpt,
		Name:         fmt.Sprintf("%d-layer MLP step, width %d, batch %d", layers, width, batch),
		Step:         step,
		Inputs: func() []*hlo.Literal {
			x, labels := train.Blobs(1, hlo.F32, int64(batch), int64(width), int64(width), 0.5)
			return append(step.Init(2), x, labels)
		},
	}, nil
}

// TransformerCase is the step (plain SGD) of train.TransformerLM with c.Blocks
// blocks, on one-hot sequences.
func TransformerCase(c train.LMConfig) (GradCase, error) {
	name := fmt.Sprintf("lm%d", c.Blocks)
	step, err := train.Build(train.TransformerLM(name, hlo.F32, c), train.SGD{LR: 0.01})
	if err != nil {
		return GradCase{}, err
	}
	ckpt, err := checkpointedSteps([]namedRemat{
		{"each block a region, nothing_saveable", train.Remat{Every: 1, Policy: hlo.NothingSaveable()}},
		{"each block a region, dots_saveable", train.Remat{Every: 1, Policy: hlo.DotsSaveable()}},
		{"each block a region, offload_dot_with_no_batch_dims", train.Remat{Every: 1, Policy: hlo.OffloadDotWithNoBatchDims()}},
		{"one region, every block's output offloaded to host memory", offloadOutputs(max(c.Blocks, 1))},
	}, func(r train.Remat) train.Model {
		rc := c
		rc.Remat = r
		return train.TransformerLM(name, hlo.F32, rc)
	})
	if err != nil {
		return GradCase{}, err
	}
	return GradCase{
		Checkpointed: ckpt,
		Name: fmt.Sprintf("%d-block transformer LM step, seq %d, dim %d, %d heads, hidden %d, vocab %d, batch %d",
			max(c.Blocks, 1), c.Seq, c.Dim, c.Heads, c.Hidden, c.Vocab, c.Batch),
		Step: step,
		Inputs: func() []*hlo.Literal {
			tokens, targets := train.OneHotSequences(3, hlo.F32, c.Batch, c.Seq, c.Vocab)
			return append(step.Init(4), tokens, targets)
		},
	}, nil
}

// MemoryPoint is one configuration of a step: the memory its plan takes and, when
// timed, its GPU time.
type MemoryPoint struct {
	Config string
	// Budget is the budget asked for (0: none); Percent is it as a % of the
	// unbudgeted peak.
	Budget  int64
	Percent float64
	// Peak is the plan's device memory (0 where Compile refused the budget with
	// ErrOverBudget: Refused); Host its host memory (offloaded values).
	Peak    int64
	Host    int64
	Refused bool
	// Time is the best GPU time of the runs; BestRatio is it ÷ the unbudgeted
	// step's best time; Ratio is the median over the rounds of time ÷ the
	// unbudgeted step's time in the same round (0 when untimed).
	Time      time.Duration
	BestRatio float64
	Ratio     float64
}

// MemoryCurve is the memory of one step across configurations: no fusion and no
// buffer reuse, the default passes (the unbudgeted peak), budgets as percentages
// of that peak, and the smallest budget Compile meets (the floor, found by
// binary search to within FloorResolution of the unbudgeted peak); then each
// checkpointed variant of the step unbudgeted, under the budgets below its own
// peak, and its floor.
type MemoryCurve struct {
	Case       string
	Unbudgeted int64
	Floor      int64
	Points     []MemoryPoint
}

// FloorResolution is the binary search's stopping width, as a fraction of the
// unbudgeted peak.
const FloorResolution = 0.005

// outputCheck says what a timed point's outputs are checked against: cpuref
// (ref < 0, when asked), or an earlier timed point's outputs (its index among the
// timed points), bit for bit when exact, else within the program's tolerance.
type outputCheck struct {
	ref   int
	exact bool
}

// curveBuilder collects a curve's points and the executables of those to time.
type curveBuilder struct {
	curve   *MemoryCurve
	runners []Runner
	checks  []outputCheck
	inputs  []*hlo.Literal
	// floorStep is the case's FloorStep.
	floorStep float64
}

func (cb *curveBuilder) add(p MemoryPoint, exe *vkxla.Executable, check outputCheck) {
	cb.curve.Points = append(cb.curve.Points, p)
	if exe != nil {
		cb.runners = append(cb.runners, &exeRunner{name: p.Config, exe: exe, inputs: cb.inputs})
		cb.checks = append(cb.checks, check)
	}
}

// GradMemory compiles c's step in every configuration and, when reps > 0, runs
// each reps times interleaved: the unbudgeted outputs are checked against cpuref
// (when checkCPU), the unfused and the checkpointed steps' against them within the
// program's tolerance, and every budgeted run must give the bits of its step's
// unbudgeted run (remat recomputes the same kernels on the same inputs).
func GradMemory(ctx context.Context, rt *vkxla.Runtime, c GradCase, percents []int, reps int, checkCPU bool) (curve MemoryCurve, err error) {
	curve.Case = c.Name
	m := c.Step.Module
	cb := &curveBuilder{curve: &curve, inputs: c.Inputs(), floorStep: c.FloorStep}
	defer func() {
		for _, r := range cb.runners {
			err = errors.Join(err, r.Close())
		}
	}()
	base, err := rt.Compile(ctx, m, vkxla.WithoutCache())
	if err != nil {
		return curve, err
	}
	curve.Unbudgeted = base.MemoryStats().PeakBytes
	cb.add(MemoryPoint{Config: "fusion + reuse (default passes, no budget)", Peak: curve.Unbudgeted, Percent: 100}, base, outputCheck{ref: -1})
	plain, err := rt.Compile(ctx, m, vkxla.WithoutCache(), vkxla.WithoutPasses(passes.OptionalNames()...))
	if err != nil {
		return curve, err
	}
	st := plain.MemoryStats()
	cb.add(MemoryPoint{Config: "no fusion, no reuse (every buffer its own memory)",
		Peak: st.ParameterBytes + st.OutputBytes + st.ConstantBytes + st.TemporaryBytes}, plain, outputCheck{ref: 0})
	if curve.Floor, err = cb.budgets(ctx, rt, m, "", percents, curve.Unbudgeted, 0); err != nil {
		return curve, err
	}
	for _, v := range c.Checkpointed {
		exe, err := rt.Compile(ctx, v.Step.Module, vkxla.WithoutCache())
		if err != nil {
			return curve, fmt.Errorf("checkpoint: %s: %w", v.Name, err)
		}
		peak := exe.MemoryStats().PeakBytes
		ref := len(cb.runners)
		prefix := "checkpoint: " + v.Name
		cb.add(MemoryPoint{Config: prefix, Peak: peak, Host: exe.MemoryStats().HostBytes}, exe, outputCheck{ref: 0})
		if _, err := cb.budgets(ctx, rt, v.Step.Module, prefix+" + ", percents, peak, ref); err != nil {
			return curve, fmt.Errorf("%s: %w", prefix, err)
		}
	}
	if reps > 0 {
		err = cb.time(ctx, reps, m, checkCPU)
	}
	return curve, err
}

// budgets adds m's points under each budget (percents of the case's unbudgeted
// peak) below peak, m's own unbudgeted peak, and its floor, each checked bit for
// bit against the timed point ref; it returns the floor.
func (cb *curveBuilder) budgets(ctx context.Context, rt *vkxla.Runtime, m *hlo.Module, prefix string, percents []int, peak int64, ref int) (int64, error) {
	unbudgeted := cb.curve.Unbudgeted
	lo := int64(0) // the largest budget known to be refused
	for _, pct := range percents {
		budget := unbudgeted * int64(pct) / 100
		if budget >= peak {
			continue // met without recomputing anything
		}
		exe, err := compileBudget(ctx, rt, m, budget)
		if err != nil {
			return 0, err
		}
		p := MemoryPoint{Config: fmt.Sprintf("%sbudget %d%%", prefix, pct), Budget: budget, Percent: float64(pct), Refused: exe == nil}
		if exe != nil {
			p.Peak, p.Host = exe.MemoryStats().PeakBytes, exe.MemoryStats().HostBytes
		} else {
			lo = max(lo, budget)
		}
		cb.add(p, exe, outputCheck{ref: ref, exact: true})
	}
	step := cmp.Or(cb.floorStep, FloorResolution)
	floor, exe, err := floorBudget(ctx, rt, m, lo, peak, max(int64(float64(unbudgeted)*step), 1))
	if err != nil {
		return 0, err
	}
	cb.add(MemoryPoint{Config: prefix + "floor (smallest budget met)", Budget: floor, Peak: exe.MemoryStats().PeakBytes,
		Host: exe.MemoryStats().HostBytes, Percent: 100 * float64(floor) / float64(unbudgeted)}, exe, outputCheck{ref: ref, exact: true})
	return floor, nil
}

// compileBudget compiles m under budget; nil (and no error) when Compile refuses
// it with ErrOverBudget.
func compileBudget(ctx context.Context, rt *vkxla.Runtime, m *hlo.Module, budget int64) (*vkxla.Executable, error) {
	exe, err := rt.Compile(ctx, m, vkxla.WithoutCache(), vkxla.WithMemoryBudget(budget))
	if errors.Is(err, vkxla.ErrOverBudget) {
		return nil, nil
	}
	return exe, err
}

// floorBudget binary-searches, to within step bytes, the smallest budget in
// (lo, hi] that Compile meets (hi, m's unbudgeted peak, always is) and returns it
// with its executable.
func floorBudget(ctx context.Context, rt *vkxla.Runtime, m *hlo.Module, lo, hi, step int64) (int64, *vkxla.Executable, error) {
	var best *vkxla.Executable
	for hi-lo > step {
		mid := lo + (hi-lo)/2
		exe, err := compileBudget(ctx, rt, m, mid)
		if err != nil {
			return 0, nil, errors.Join(err, closeExe(best))
		}
		if exe == nil {
			lo = mid
			continue
		}
		if err := closeExe(best); err != nil {
			return 0, nil, errors.Join(err, exe.Close())
		}
		hi, best = mid, exe
	}
	if best == nil {
		exe, err := compileBudget(ctx, rt, m, hi)
		if err != nil || exe == nil {
			return 0, nil, fmt.Errorf("a budget of %d bytes, the unbudgeted peak, was refused: %w", hi, err)
		}
		best = exe
	}
	return hi, best, nil
}

func closeExe(e *vkxla.Executable) error {
	if e == nil {
		return nil
	}
	return e.Close()
}

// time runs the timed points (the unbudgeted step first), checks their outputs,
// and fills in the points' times and ratios.
func (cb *curveBuilder) time(ctx context.Context, reps int, m *hlo.Module, checkCPU bool) error {
	for _, r := range cb.runners { // a first run, untimed: its pipelines' first use
		if _, err := r.Run(ctx); err != nil {
			return fmt.Errorf("%s: %w", r.Name(), err)
		}
	}
	stats, err := Measure(ctx, cb.runners, reps)
	if err != nil {
		return err
	}
	if err := cb.checkOutputs(m, checkCPU); err != nil {
		return err
	}
	k := 0
	points := cb.curve.Points
	for i := range points {
		if points[i].Refused {
			continue
		}
		points[i].Time = stats[k].Best()
		points[i].Ratio = 1 / RoundRatio(stats[k], stats[0])
		points[i].BestRatio = 1 / Speedup(stats[k].Best(), stats[0].Best())
		k++
	}
	return nil
}

// checkOutputs checks each timed point's last outputs as its outputCheck says.
func (cb *curveBuilder) checkOutputs(m *hlo.Module, checkCPU bool) error {
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	outs := func(i int) []*hlo.Literal { return cb.runners[i].(*exeRunner).outs }
	for i, c := range cb.checks {
		var err error
		switch {
		case c.ref < 0 && !checkCPU:
		case c.ref < 0:
			var want *hlo.Literal
			if want, err = cpuref.Eval(m, cb.inputs...); err == nil {
				err = closeAll(outs(i), want.Leaves(), spec)
			}
		case c.exact:
			for k, o := range outs(i) {
				if e := hlo.LiteralsEqual(o, outs(c.ref)[k]); e != nil {
					err = fmt.Errorf("output %d differs from %s's: %w", k, cb.runners[c.ref].Name(), e)
					break
				}
			}
		default:
			err = closeAll(outs(i), outs(c.ref), spec)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cb.runners[i].Name(), err)
		}
	}
	return nil
}

func closeAll(got, want []*hlo.Literal, spec vkxla.ErrorSpec) error {
	for i := range want {
		if err := hlo.LiteralsClose(got[i], want[i], spec.Abs, spec.Rel); err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
	}
	return nil
}

// WriteMemoryCurve prints a curve as a markdown table: configuration, budget,
// peak reached (bytes and % of the unbudgeted peak), GPU time and its ratio to
// the unbudgeted step's (of best times, and the median of the rounds' ratios).
func WriteMemoryCurve(out io.Writer, c MemoryCurve) {
	fmt.Fprintf(out, "%s — unbudgeted peak %s, floor %s (%.1f%%)\n\n", c.Case, mib(c.Unbudgeted), mib(c.Floor),
		100*float64(c.Floor)/float64(c.Unbudgeted))
	fmt.Fprintln(out, "| configuration | budget | peak reached | % of unbudgeted | host memory | best GPU ms | best ÷ unbudgeted best | round ratio |")
	fmt.Fprintln(out, "|---|---|---|---|---|---:|---:|---:|")
	for _, p := range c.Points {
		budget, peak, pct := "—", "over budget (ErrOverBudget)", "—"
		if p.Budget > 0 {
			budget = mib(p.Budget)
		}
		if !p.Refused {
			peak, pct = mib(p.Peak), fmt.Sprintf("%.1f%%", 100*float64(p.Peak)/float64(c.Unbudgeted))
		}
		tm, best, ratio := "—", "—", "—"
		if p.Time > 0 {
			tm, best, ratio = ms(p.Time), times(p.BestRatio), times(p.Ratio)
		}
		host := "—"
		if p.Host > 0 {
			host = mib(p.Host)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Config, budget, peak, pct, host, tm, best, ratio)
	}
}

func times(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
