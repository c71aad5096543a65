package plan

import (
	"errors"
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// SegmentedDerivative makes a derivative whose loops of n steps are checkpointed
// every k steps (autodiff.Options.LoopCheckpoint{Every: k}); k = n differentiates
// them whole.
type SegmentedDerivative func(every int64) (*hlo.Module, error)

// BuildSegmented is the budget path of every-k checkpointing (issue 18 item 3):
// it plans the whole-loop derivative under o.MemoryBudget and, where that is
// refused, the derivative in 2, 4, 8, … segments up to ⌈√n⌉ (k = ⌈n/segments⌉),
// returning the first plan that meets the budget (the fewest segments: the least
// recomputation) and its k. Where none does, the error is the OverBudgetError of
// the lowest floor found, which it names.
func BuildSegmented(derive SegmentedDerivative, n int64, t Target, o Options) (*Plan, int64, error) {
	if n < 1 {
		return nil, 0, fmt.Errorf("plan: BuildSegmented: trip count %d: %w", n, ErrInvalidArgument)
	}
	var best *OverBudgetError
	for _, k := range segmentLengths(n) {
		m, err := derive(k)
		if err != nil {
			return nil, 0, fmt.Errorf("plan: segments of %d steps: %w", k, err)
		}
		p, err := Build(m, t, o)
		var over *OverBudgetError
		if !errors.As(err, &over) {
			return p, k, err
		}
		if best == nil || over.Floor < best.Floor {
			best = over
		}
	}
	return nil, 0, best
}

// segmentLengths are n (whole), then ⌈n/s⌉ for s = 2, 4, 8, … segments, up to
// ⌈√n⌉ segments, each length once.
func segmentLengths(n int64) []int64 {
	out := []int64{n}
	root := int64(math.Ceil(math.Sqrt(float64(n))))
	for s := int64(2); ; s *= 2 {
		s = min(s, root)
		if k := (n + s - 1) / s; k < out[len(out)-1] {
			out = append(out, k)
		}
		if s == root {
			return out
		}
	}
}
