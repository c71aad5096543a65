package heapsim

import (
	"errors"

	"github.com/vkxla/vkxla/hlo"
)

// Sentinel errors callers branch on with errors.Is (the root re-exports them).
var (
	// ErrUnsupported: the module uses something this target or compiler cannot run
	// (the root re-exports it). It is hlo's, so that valid HLO vkxla does not run
	// (a collective over several replicas) is the same error at every layer.
	ErrUnsupported = hlo.ErrUnsupported
	// ErrOverBudget: the plan could not meet Options.MemoryBudget; the error says
	// what the plan needs.
	ErrOverBudget = errors.New("over the memory budget")
)
