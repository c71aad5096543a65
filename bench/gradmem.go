package bench

import (
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
// is measured: the step module and its inputs (initial state, then the batch).
type GradCase struct {
	Name   string
	Step   *train.Step
	Inputs func() []*hlo.Literal
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
	model := train.MLP(fmt.Sprintf("mlp%d", layers), hlo.F32, int64(batch), sizes...)
	step, err := train.Build(model, train.SGD{LR: 0.01})
	if err != nil {
		return GradCase{}, err
	}
	return GradCase{
		Name: fmt.Sprintf("%d-layer MLP step, width %d, batch %d", layers, width, batch),
		Step: step,
		Inputs: func() []*hlo.Literal {
			x, labels := train.Blobs(1, hlo.F32, int64(batch), int64(width), int64(width), 0.5)
			return append(step.Init(2), x, labels)
		},
	}, nil
}

// TransformerCase is the step (plain SGD) of train.TransformerLM with c.Blocks
// blocks, on one-hot sequences.
func TransformerCase(c train.LMConfig) (GradCase, error) {
	step, err := train.Build(train.TransformerLM(fmt.Sprintf("lm%d", c.Blocks), hlo.F32, c), train.SGD{LR: 0.01})
	if err != nil {
		return GradCase{}, err
	}
	return GradCase{
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
	// ErrOverBudget: Refused).
	Peak    int64
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
// binary search to within FloorResolution of the unbudgeted peak).
type MemoryCurve struct {
	Case       string
	Unbudgeted int64
	Floor      int64
	Points     []MemoryPoint
}

// FloorResolution is the binary search's stopping width, as a fraction of the
// unbudgeted peak.
const FloorResolution = 0.005

// GradMemory compiles c's step in every configuration and, when reps > 0, runs
// each reps times interleaved: the unbudgeted outputs are checked against cpuref
// (when checkCPU) and every budgeted run must give the same bits (remat recomputes
// the same kernels on the same inputs).
func GradMemory(ctx context.Context, rt *vkxla.Runtime, c GradCase, percents []int, reps int, checkCPU bool) (curve MemoryCurve, err error) {
	curve.Case = c.Name
	m := c.Step.Module
	var runners []Runner
	defer func() {
		for _, r := range runners {
			err = errors.Join(err, r.Close())
		}
	}()
	inputs := c.Inputs()
	add := func(p MemoryPoint, exe *vkxla.Executable) {
		curve.Points = append(curve.Points, p)
		if exe != nil {
			runners = append(runners, &exeRunner{name: p.Config, exe: exe, inputs: inputs})
		}
	}
	base, err := rt.Compile(ctx, m, vkxla.WithoutCache())
	if err != nil {
		return curve, err
	}
	curve.Unbudgeted = base.MemoryStats().PeakBytes
	add(MemoryPoint{Config: "fusion + reuse (default passes, no budget)", Peak: curve.Unbudgeted, Percent: 100}, base)
	plain, err := rt.Compile(ctx, m, vkxla.WithoutCache(), vkxla.WithoutPasses(passes.OptionalNames()...))
	if err != nil {
		return curve, err
	}
	st := plain.MemoryStats()
	add(MemoryPoint{Config: "no fusion, no reuse (every buffer its own memory)",
		Peak: st.ParameterBytes + st.OutputBytes + st.ConstantBytes + st.TemporaryBytes}, plain)
	lo := int64(0) // the largest budget known to be refused
	for _, pct := range percents {
		budget := curve.Unbudgeted * int64(pct) / 100
		exe, err := compileBudget(ctx, rt, m, budget)
		if err != nil {
			return curve, err
		}
		p := MemoryPoint{Config: fmt.Sprintf("budget %d%%", pct), Budget: budget, Percent: float64(pct), Refused: exe == nil}
		if exe != nil {
			p.Peak = exe.MemoryStats().PeakBytes
		} else {
			lo = max(lo, budget)
		}
		add(p, exe)
	}
	floor, exe, err := floorBudget(ctx, rt, m, lo, curve.Unbudgeted)
	if err != nil {
		return curve, err
	}
	curve.Floor = floor
	add(MemoryPoint{Config: "floor (smallest budget met)", Budget: floor, Peak: exe.MemoryStats().PeakBytes,
		Percent: 100 * float64(floor) / float64(curve.Unbudgeted)}, exe)
	if reps > 0 {
		err = curve.time(ctx, runners, reps, m, inputs, checkCPU)
	}
	return curve, err
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

// floorBudget binary-searches the smallest budget in (lo, hi] that Compile meets
// (hi, the unbudgeted peak, always is) and returns it with its executable.
func floorBudget(ctx context.Context, rt *vkxla.Runtime, m *hlo.Module, lo, hi int64) (int64, *vkxla.Executable, error) {
	var best *vkxla.Executable
	step := max(int64(float64(hi)*FloorResolution), 1)
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

// time runs the runners (the compiled points in order, the unbudgeted first),
// checks their outputs, and fills in the points' times and ratios.
func (curve *MemoryCurve) time(ctx context.Context, runners []Runner, reps int, m *hlo.Module, inputs []*hlo.Literal, checkCPU bool) error {
	for _, r := range runners { // a first run, untimed: its pipelines' first use
		if _, err := r.Run(ctx); err != nil {
			return fmt.Errorf("%s: %w", r.Name(), err)
		}
	}
	stats, err := Measure(ctx, runners, reps)
	if err != nil {
		return err
	}
	if err := checkOutputs(runners, m, inputs, checkCPU); err != nil {
		return err
	}
	k := 0
	for i := range curve.Points {
		if curve.Points[i].Refused {
			continue
		}
		curve.Points[i].Time = stats[k].Best()
		curve.Points[i].Ratio = 1 / RoundRatio(stats[k], stats[0])
		curve.Points[i].BestRatio = 1 / Speedup(stats[k].Best(), stats[0].Best())
		k++
	}
	return nil
}

// checkOutputs compares the unbudgeted runner's last outputs with cpuref (when
// asked), the unfused one's with them within the program's tolerance, and every
// budgeted one's bit for bit.
func checkOutputs(runners []Runner, m *hlo.Module, inputs []*hlo.Literal, checkCPU bool) error {
	base := runners[0].(*exeRunner).outs
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	if checkCPU {
		want, err := cpuref.Eval(m, inputs...)
		if err != nil {
			return err
		}
		if err := closeAll(base, want.Leaves(), spec); err != nil {
			return fmt.Errorf("%s: %w", runners[0].Name(), err)
		}
	}
	if err := closeAll(runners[1].(*exeRunner).outs, base, spec); err != nil {
		return fmt.Errorf("%s: %w", runners[1].Name(), err)
	}
	for _, r := range runners[2:] {
		for i, o := range r.(*exeRunner).outs {
			if err := hlo.LiteralsEqual(o, base[i]); err != nil {
				return fmt.Errorf("%s: output %d differs from the unbudgeted run: %w", r.Name(), i, err)
			}
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
	fmt.Fprintln(out, "| configuration | budget | peak reached | % of unbudgeted | best GPU ms | best ÷ unbudgeted best | round ratio |")
	fmt.Fprintln(out, "|---|---|---|---|---:|---:|---:|")
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
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n", p.Config, budget, peak, pct, tm, best, ratio)
	}
}

func times(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
