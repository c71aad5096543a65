// Package vkxla compiles HLO modules to SPIR-V and runs them on any Vulkan device.
//
//	rt, err := vkxla.NewRuntime()
//	exe, err := rt.Compile(ctx, module)
//	outs, err := exe.Run(ctx, x, y)
//
// An executable lowers every instruction of its entry computation to compute kernels
// (spirv/codegen), places every buffer at a fixed (offset, size) of one arena plan
// (arena), records its dispatches into command buffers once, and replays them on every
// Run. Control flow (while, conditional) is driven by the host between recorded
// segments. The executable's device memory is known before it runs: MemoryStats.
//
// CompileReplicated compiles one SPMD program for several devices (one runtime
// each); Replicated.Run runs them together, their collectives host steps where the
// devices meet (docs/replicas.md).
package vkxla

import (
	"errors"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/internal/collective"
	"github.com/vkxla/vkxla/plan"
)

// Sentinel errors callers branch on with errors.Is. Device errors (out of device
// memory, device lost, no device) are device's sentinels, re-exported here.
var (
	// ErrClosed: the runtime, executable or device tensor was closed. It is
	// device.ErrClosed, which arena.ErrClosed wraps too, so errors.Is(err, ErrClosed)
	// holds whichever layer noticed the closed object.
	ErrClosed = device.ErrClosed
	// ErrInvalidArgument: Run's inputs do not match the entry computation.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrUnsupported: the module uses something this device or compiler cannot run.
	ErrUnsupported = plan.ErrUnsupported
	// ErrOverBudget: Compile could not meet WithMemoryBudget; the error says what
	// the plan needs.
	ErrOverBudget = plan.ErrOverBudget
	// ErrValidation: the Vulkan validation layer reported problems while the runtime
	// was open (Close returns it, with the messages).
	ErrValidation = errors.New("validation layer reported problems")
	// ErrMismatch: the devices of a Replicated.Run could not all meet at a
	// collective (one finished or failed without reaching it, or waits at
	// another); every device stopped.
	ErrMismatch = collective.ErrMismatch
)
