package heapsim

import "errors"

// Sentinel errors callers branch on with errors.Is (the root re-exports them).
var (
	// ErrUnsupported: the module uses something this target or compiler cannot run (the root re-exports it).
	ErrUnsupported = errors.New("unsupported")
	// ErrOverBudget: the plan could not meet Options.MemoryBudget; the error says
	// what the plan needs.
	ErrOverBudget = errors.New("over the memory budget")
)
