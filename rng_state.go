package vkxla

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// The RNG state of rng and rng-get-and-update-state (docs/runtime.md). The
// rng-state pass makes it the optimized entry's last parameter, a u64[2] 128-bit
// counter {low, high}, and the root (outputs, state after the run). Each
// Executable handle keeps its own state: a run starts from it, and the handle
// keeps the state the run ends at (a 16-byte download). So two runs of one handle
// draw different numbers, two handles of one cached compilation draw independent
// streams (each starts at a random seed), and SeedRng makes a handle's draws
// reproducible. The state is not part of the compiled program: the compile cache
// shares the program, never the state.

// rngStream is one handle's state; runs read and advance it holding c.mu.
type rngStream struct {
	ready bool      // state holds a seed's state
	state [2]uint64 // where the next run's draws start
}

// SeedRng restarts the handle's RNG state at seed's (hlo.RngSeedState): the runs
// that follow draw what the same runs of any handle seeded alike draw, and what
// cpuref.Limits.EvalWithRngState draws from hlo.RngSeedState(seed). A handle never
// seeded starts at a random seed. Programs without rng ignore it.
func (e *Executable) SeedRng(seed uint64) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.rng = rngStream{ready: true, state: hlo.RngSeedState(seed)}
	return nil
}

// RngState returns the RNG state the handle's next run starts from.
func (e *Executable) RngState() ([2]uint64, error) {
	if err := e.checkOpen(); err != nil {
		return [2]uint64{}, err
	}
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.rng.init()
	return e.rng.state, nil
}

// init starts a handle never seeded at a random seed.
func (r *rngStream) init() {
	if !r.ready {
		*r = rngStream{ready: true, state: hlo.RngSeedState(rand.Uint64())}
	}
}

// splitRngRoot separates the run's final RNG state from the outputs where the
// rng-state pass threaded one: the optimized root is then (outputs, state).
func (c *compiled) splitRngRoot() error {
	n := len(c.module.Entry.Params)
	if len(c.params) == n {
		return nil
	}
	if len(c.params) != n+1 || !c.params[n].Shape.Equal(hlo.RngStateShape) || len(c.root.Shape.Elems) != 2 {
		return fmt.Errorf("internal error: the optimized entry takes %d parameters for %d inputs and returns %v, not the RNG state and (outputs, state)",
			len(c.params), n, c.root.Shape)
	}
	full := c.root
	outs := len(full.Shape.Elems[0].Leaves())
	c.root = plan.Value{Shape: full.Shape.Elems[0], Leaves: full.Leaves[:outs]}
	c.rngEnd = plan.Value{Shape: full.Shape.Elems[1], Leaves: full.Leaves[outs:]}
	return nil
}

// stageRngState writes the handle's state into the state parameter, when the
// program has one (it follows the caller's inputs). The caller holds c.mu.
func (e *Executable) stageRngState(ctx context.Context) error {
	c := e.c
	if len(c.rngEnd.Leaves) == 0 {
		return nil
	}
	e.rng.init()
	if err := c.uploadLiteral(ctx, c.params[len(c.module.Entry.Params)], hlo.MustFromSlice([]int64{2}, e.rng.state[:])); err != nil {
		return fmt.Errorf("RNG state: %w", err)
	}
	return nil
}

// keepRngState reads the state the run ended at into the handle. The caller
// holds c.mu.
func (e *Executable) keepRngState(ctx context.Context) error {
	c := e.c
	if len(c.rngEnd.Leaves) == 0 {
		return nil
	}
	end := hlo.NewLiteral(hlo.RngStateShape)
	if err := c.arena.Download(ctx, c.arena.PlanRange(c.rngEnd.Leaves[0]), end.Bytes()); err != nil {
		return fmt.Errorf("RNG state: %w", err)
	}
	e.rng.state = [2]uint64{end.Uint64(0), end.Uint64(1)}
	return nil
}
